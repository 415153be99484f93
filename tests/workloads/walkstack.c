/* cflags: -rdynamic */
#define _GNU_SOURCE
/* walkstack - a program that walks its own stack, with backtrace(3) and
 * _Unwind_Backtrace, under outer() -> middle() -> walk().  For i in 0..N-1
 * (N from argv[1], default 20), main calls outer(i); walk() prints once
 * (on the first call) the functions each walk found, by dladdr, and counts
 * the calls whose walks did not find main.  Truth: the same lines traced
 * as untraced: "backtrace: walk middle outer main ...", "unwind: ...",
 * "calls N lost-main 0". */
#include <dlfcn.h>
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>

#define MAXF 64
static int lost_main, printed;

static void names(const char *what, void **pcs, int n, int print)
{
	int saw_main = 0;
	if (print)
		printf("%s:", what);
	for (int i = 0; i < n; i++) {
		Dl_info di;
		const char *s = dladdr(pcs[i], &di) && di.dli_sname ? di.dli_sname : "?";
		saw_main |= !strcmp(s, "main");
		if (print)
			printf(" %s", s);
	}
	if (print)
		printf("\n");
	lost_main += !saw_main;
}

struct ucollect {
	void *pcs[MAXF];
	int n;
};

static _Unwind_Reason_Code one(struct _Unwind_Context *ctx, void *arg)
{
	struct ucollect *u = arg;
	if (u->n >= MAXF)
		return _URC_END_OF_STACK;
	u->pcs[u->n++] = (void *)_Unwind_GetIP(ctx);
	return _URC_NO_REASON;
}

__attribute__((noinline)) long walk(long i)
{
	void *pcs[MAXF];
	int n = backtrace(pcs, MAXF);
	names("backtrace", pcs, n, !printed);
	struct ucollect u = { .n = 0 };
	_Unwind_Backtrace(one, &u);
	names("unwind", u.pcs, u.n, !printed);
	printed = 1;
	return i + n;
}

__attribute__((noinline)) long middle(long i)
{
	return walk(i) + 1;
}

__attribute__((noinline)) long outer(long i)
{
	return middle(i) + 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20, sum = 0;
	for (long i = 0; i < n; i++)
		sum += outer(i);
	printf("calls %ld lost-main %d\n", n, lost_main);
	return sum == 0;
}

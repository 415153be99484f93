/* gatecalls - known truth for lp-record --inside FUNC: calls nested,
 * recursive, and left without returning.  Runs until it has used argv[1]
 * seconds of this thread's CPU (default 2), in mode argv[2]:
 *
 * rec: each round, rec(4) nests five calls of rec, each burning 1 ms
 *   before its inner call and 1 ms after that call returned, then out()
 *   burns 10 ms outside rec.  So rec is on the stack for 50% of the CPU
 *   time, and each depth of rec (1 to 5 calls on the stack) is the
 *   innermost for a fifth of that; a gate that ended at the first return
 *   of a nested call would see only 30% (the five spins before the inner
 *   calls, the innermost one's after).
 * throw (the default), jump: each round, leave() burns 2 ms, then leaves
 *   by a C++ exception caught in main, or by longjmp back to main; then
 *   main calls after(), which burns 2 ms from the frame leave was called
 *   from.  So leave is on the stack for 50% of the CPU time; a gate left
 *   open by the unreturned calls would see about 100%.
 *
 * Prints "ok ROUNDS left LEFT" (LEFT: the rounds that left leave without
 * returning, all of them in modes throw and jump). */
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>

static volatile uint64_t sink;
static std::jmp_buf back;
static bool jump;

static int64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) static void spin(int64_t ns)
{
	int64_t end = cpu_ns() + ns;

	do {
		for (int i = 0; i < 20000; i++)
			sink += i * 7;
	} while (cpu_ns() < end);
}

__attribute__((noinline)) void rec(int n)
{
	spin(1000000);
	if (n > 0)
		rec(n - 1);
	spin(1000000);
}

__attribute__((noinline)) void out(void)
{
	spin(10000000);
}

__attribute__((noinline)) void leave(long i)
{
	spin(2000000);
	if (jump)
		std::longjmp(back, 1);
	throw std::runtime_error(i % 2 ? "odd" : "even");
}

__attribute__((noinline)) void after(void)
{
	spin(2000000);
}

int main(int argc, char **argv)
{
	double cpu = argc > 1 ? atof(argv[1]) : 2;
	const char *mode = argc > 2 ? argv[2] : "throw";
	int64_t cpu_end = (int64_t)(cpu * 1e9);
	volatile long rounds = 0, left = 0;

	jump = !strcmp(mode, "jump");
	while (cpu_ns() < cpu_end) {
		if (!strcmp(mode, "rec")) {
			rec(4);
			out();
		} else if (jump) {
			if (setjmp(back) == 0)
				leave(rounds);
			else
				left = left + 1;
			after();
		} else {
			try {
				leave(rounds);
			} catch (const std::exception &) {
				left = left + 1;
			}
			after();
		}
		rounds = rounds + 1;
	}
	printf("ok %ld left %ld\n", (long)rounds, (long)left);
	return 0;
}

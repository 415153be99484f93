/* gatethrow - calls left without returning, for lp-record --inside leave.
 * Each round, leave() burns 2 ms of this thread's CPU, then leaves by a C++
 * exception caught in main (argv[2] "throw", the default) or by longjmp
 * back to main ("jump"); then main calls after(), which burns 2 ms from
 * the same frame leave was called from.  Truth: leave is on the stack for
 * 50% of the CPU time; a gate left open by the unreturned calls would see
 * about 100%.  Runs until it has used argv[1] seconds of CPU (default 2);
 * prints "ok ROUNDS left LEFT" (LEFT: rounds that left leave, all). */
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
	int64_t cpu_end = (int64_t)(cpu * 1e9);
	volatile long rounds = 0, left = 0;

	jump = argc > 2 && !strcmp(argv[2], "jump");
	while (cpu_ns() < cpu_end) {
		if (jump) {
			if (setjmp(back) == 0)
				leave(rounds);
			else
				left = left + 1;
		} else {
			try {
				leave(rounds);
			} catch (const std::exception &) {
				left = left + 1;
			}
		}
		after();
		rounds = rounds + 1;
	}
	printf("ok %ld left %ld\n", (long)rounds, (long)left);
	return 0;
}

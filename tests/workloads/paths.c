/* paths - one thread whose stacks never repeat, for lp-record's memory
 * bound (--stack-memory).  Walk number w goes DEPTH levels down (default
 * 40), through left() where bit d of w is 0 and right() where it is 1, and
 * spins at the bottom; so walks 0 to 2^DEPTH - 1 all have different stacks,
 * while the functions stay five.
 *
 * usage: paths SECONDS [DEPTH]
 * SECONDS of its CPU time (CLOCK_THREAD_CPUTIME_ID): a sampler gets as many
 * samples of it however busy the machine.
 * At its end it prints "walks=N depth=D". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

__attribute__((noinline)) static void bottom(void)
{
	for (int i = 0; i < 20000; i++)
		sink += (uint64_t)i * i;
}

static void walk(int d, uint64_t w);

/* The empty asm after each call keeps it from being a tail call, which
 * would leave the caller's frame out of the stack. */
__attribute__((noinline)) static void left(int d, uint64_t w)
{
	walk(d - 1, w);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void right(int d, uint64_t w)
{
	walk(d - 1, w);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void walk(int d, uint64_t w)
{
	if (d == 0)
		bottom();
	else if (w >> (d - 1) & 1)
		right(d, w);
	else
		left(d, w);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 5;
	int depth = argc > 2 ? atoi(argv[2]) : 40;
	struct timespec now, end;
	uint64_t w = 0;

	if (depth < 1 || depth > 64) {
		fprintf(stderr, "paths: depth 1 to 64\n");
		return 2;
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end);
	end.tv_sec += (time_t)seconds;
	end.tv_nsec += (long)((seconds - (time_t)seconds) * 1e9);
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	do {
		walk(depth, w++);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	} while (now.tv_sec < end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	printf("walks=%llu depth=%d\n", (unsigned long long)w, depth);
	return 0;
}

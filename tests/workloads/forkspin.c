/* forkspin - short-lived children that fork without exec: forks N children
 * (default 200) one after the other; each spins in child_spin() for MS
 * milliseconds of its own CPU time (default 5), then _exits; the parent
 * waits for each before the next fork, off the CPU, and sleeps LINGER ms
 * (argv[3], default 0) after the last.  Truth: the children's
 * on-CPU samples are in child_spin, but for the few in fork's return and
 * exit; their program is the parent's, mapped as it was at the fork.  The
 * parent's pid is written first, then each child's once it has exited, a
 * line each, flushed. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void child_spin(double ms)
{
	double end = cpu_ms() + ms;

	while (cpu_ms() < end)
		for (int i = 0; i < 1000; i++)
			sink += i;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;
	double ms = argc > 2 ? atof(argv[2]) : 5;
	long linger = argc > 3 ? atol(argv[3]) : 0;

	printf("%d\n", (int)getpid());

	for (int c = 0; c < n; c++) {
		pid_t pid = fork();
		if (pid == 0) {
			child_spin(ms);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			return 1;
		printf("%d\n", (int)pid);
		fflush(stdout);
	}
	struct timespec ts = { linger / 1000, linger % 1000 * 1000000 };
	nanosleep(&ts, NULL);
	return 0;
}

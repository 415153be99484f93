/* forkspin - short-lived children that fork without exec: forks N children
 * (default 200) one after the other; each spins in child_spin() for MS
 * milliseconds of its own CPU time (default 5), then _exits; the parent
 * waits for each before the next fork, off the CPU, and sleeps LINGER ms
 * (argv[3], default 0) after the last.  Truth: the children's on-CPU
 * samples are in child_spin, but for those in fork's return (the kernel's
 * return to the child, its copy-on-write faults), in resolving the
 * symbols the child first calls, and in _exit; their program is the
 * parent's, mapped as it was at the fork.  The parent's pid is written
 * first, then each child's once it has exited, a line each, flushed.
 *
 * With FORKSPIN_TRUTH=FILE, how the children's CPU time went, as they and
 * the kernel measured it: "children=N cpu_ms=T spin_ms=S spin_pct=P",
 * T their CPU time in all (wait4's rusage), S the part inside child_spin
 * (each child's own CPU clock at its entry and return). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
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

/* The CPU time child_spin took, from its entry to its return. */
__attribute__((noinline)) double child_spin(double ms)
{
	double start = cpu_ms(), end = start + ms, now;

	while ((now = cpu_ms()) < end)
		for (int i = 0; i < 1000; i++)
			sink += i;
	return now - start;
}

static double tv_ms(struct timeval tv)
{
	return tv.tv_sec * 1e3 + tv.tv_usec / 1e3;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;
	double ms = argc > 2 ? atof(argv[2]) : 5;
	long linger = argc > 3 ? atol(argv[3]) : 0;
	const char *truth = getenv("FORKSPIN_TRUTH");
	double cpu = 0, spin = 0;
	int fds[2];

	if (pipe(fds) < 0)
		return 1;
	printf("%d\n", (int)getpid());

	for (int c = 0; c < n; c++) {
		pid_t pid = fork();
		if (pid == 0) {
			double took = child_spin(ms);
			if (write(fds[1], &took, sizeof(took)) != sizeof(took))
				_exit(1);
			_exit(0);
		}
		struct rusage ru;
		double took;
		int status;
		if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || status != 0 ||
		    read(fds[0], &took, sizeof(took)) != sizeof(took))
			return 1;
		cpu += tv_ms(ru.ru_utime) + tv_ms(ru.ru_stime);
		spin += took;
		printf("%d\n", (int)pid);
		fflush(stdout);
	}
	if (truth) {
		FILE *f = fopen(truth, "w");
		if (!f)
			return 1;
		fprintf(f, "children=%d cpu_ms=%.1f spin_ms=%.1f spin_pct=%.1f\n", n, cpu, spin,
			cpu > 0 ? 100 * spin / cpu : 0);
		fclose(f);
	}
	struct timespec ts = { linger / 1000, linger % 1000 * 1000000 };
	nanosleep(&ts, NULL);
	return 0;
}

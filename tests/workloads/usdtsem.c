/* usdtsem - a USDT probe behind a semaphore: lp:sem(i) fires only while
 * lp_sem_semaphore is set, which a tracer does when it attaches.  Makes 50
 * calls 10 ms apart and prints "PID SEEN": how many saw the semaphore set.
 * "usdtsem fork": forks first, and parent and child each do so. */
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <string.h>
#include <sys/sdt.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

unsigned short lp_sem_semaphore __attribute__((section(".probes"), used));

int main(int argc, char **argv)
{
	struct timespec ts = { 0, 10000000 };
	pid_t child = -1;
	if (argc > 1 && !strcmp(argv[1], "fork") && (child = fork()) < 0)
		return 1;
	int seen = 0;
	for (int i = 0; i < 50; i++) {
		if (lp_sem_semaphore) {
			seen++;
			DTRACE_PROBE1(lp, sem, i);
		}
		nanosleep(&ts, NULL);
	}
	printf("%d %d\n", (int)getpid(), seen);
	fflush(stdout);
	if (child > 0 && waitpid(child, NULL, 0) != child)
		return 1;
	return 0;
}

/* usdtsem - a USDT probe behind a semaphore: lp:sem(i) fires only while
 * lp_sem_semaphore is set, which a tracer does when it attaches.  Makes 50
 * calls 10 ms apart and prints how many saw the semaphore set. */
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <sys/sdt.h>
#include <time.h>

unsigned short lp_sem_semaphore __attribute__((section(".probes"), used));

int main(void)
{
	struct timespec ts = { 0, 10000000 };
	int seen = 0;
	for (int i = 0; i < 50; i++) {
		if (lp_sem_semaphore) {
			seen++;
			DTRACE_PROBE1(lp, sem, i);
		}
		nanosleep(&ts, NULL);
	}
	printf("%d\n", seen);
	return 0;
}

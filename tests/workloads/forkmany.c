/* forkmany - many short-lived children, each making known calls from its
 * first instruction on.
 *
 *   forkmany N K [LIFE_US [AT_ONCE]]
 *
 * Forks N children (N = 0: until killed), at most AT_ONCE (default N, or 8
 * when N is 0) alive at a time; each child calls work(i) for i = 0..K-1 at
 * once after the fork, spread evenly over LIFE_US microseconds (default 0:
 * back to back), then exits.  The parent makes no such call and exits when
 * every child has.  Truth: N * K calls of work, K per child, each returning
 * 2 * i. */
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile long sink;

__attribute__((noinline)) long work(long i)
{
	sink += i;
	return i * 2;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 4;
	long k = argc > 2 ? atol(argv[2]) : 10;
	long life = argc > 3 ? atol(argv[3]) : 0;
	long at_once = argc > 4 ? atol(argv[4]) : (n ? n : 8);
	long alive = 0, failed = 0;

	for (long c = 0; n == 0 || c < n; c++) {
		if (alive >= at_once) {
			int st;
			if (wait(&st) > 0) {
				alive--;
				failed += !WIFEXITED(st) || WEXITSTATUS(st);
			}
		}
		pid_t pid = fork();
		if (pid == 0) {
			long gap = k > 1 ? life * 1000 / (k - 1) : 0;
			for (long i = 0; i < k; i++) {
				if (work(i) != 2 * i)
					_exit(1);
				if (gap && i + 1 < k) {
					struct timespec ts = { gap / 1000000000, gap % 1000000000 };
					nanosleep(&ts, NULL);
				}
			}
			_exit(0);
		}
		if (pid < 0)
			return 1;
		alive++;
	}
	int st;
	while (wait(&st) > 0)
		failed += !WIFEXITED(st) || WEXITSTATUS(st);
	return failed != 0;
}

/* forker - known calls in forked children: forks N children (default 4) one
 * after the other; each child first makes K write(2) calls of 3 bytes to
 * /dev/null at once (before any tracer could attach to it), then sleeps
 * 200 ms and calls work(i) K times (default 10), then exits; the parent
 * waits for each before the next fork and makes no calls of its own.
 * Truth: N * K spans of work and N * K writes, all from N children. */
#include <fcntl.h>
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
	int n = argc > 1 ? atoi(argv[1]) : 4;
	int k = argc > 2 ? atoi(argv[2]) : 10;

	for (int c = 0; c < n; c++) {
		pid_t pid = fork();
		if (pid == 0) {
			int fd = open("/dev/null", O_WRONLY);
			for (int i = 0; i < k; i++)
				if (write(fd, "abc", 3) != 3)
					_exit(1);
			struct timespec ts = { 0, 200000000 };
			nanosleep(&ts, NULL);
			for (int i = 0; i < k; i++)
				work(i);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			return 1;
	}
	return 0;
}

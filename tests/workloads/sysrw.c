/* sysrw - known system calls: reads 4096 bytes from /dev/zero 5 times and
 * writes 1000 bytes to /dev/null 7 times, after a 100 ms pause. */
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	static char buf[4096];
	struct timespec ts = { 0, 100000000 };
	nanosleep(&ts, NULL);
	int in = open("/dev/zero", O_RDONLY), out = open("/dev/null", O_WRONLY);
	if (in < 0 || out < 0)
		return 1;
	for (int i = 0; i < 5; i++)
		if (read(in, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return 1;
	memset(buf, 'x', sizeof(buf));
	for (int i = 0; i < 7; i++)
		if (write(out, buf, 1000) != 1000)
			return 1;
	return 0;
}

/* jit - runs machine code from an anonymous executable mapping, as a JIT
 * does, and describes it in /tmp/perf-PID.map the way perf expects
 * ("START SIZE NAME", hex): a sampler must name the frame lp_jit_hot.
 * Spins for argv[1] seconds (default 10).  x86-64 only. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* mov $200000, %rcx; 1: dec %rcx; jnz 1b; ret */
static const unsigned char code[] = {
	0x48, 0xc7, 0xc1, 0x40, 0x0d, 0x03, 0x00,
	0x48, 0xff, 0xc9,
	0x75, 0xfb,
	0xc3,
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 10);
	char path[64];
	unsigned char *buf;
	void (*fn)(void);
	FILE *f;

	buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		perror("jit: mmap");
		return 1;
	}
	/* Somewhere inside the page, as a JIT's code would be. */
	memcpy(buf + 256, code, sizeof(code));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		return 1;
	}
	fprintf(f, "%lx %zx lp_jit_hot\n", (unsigned long)(uintptr_t)(buf + 256), sizeof(code));
	fclose(f);
	*(void **)&fn = buf + 256;
	while (now() < end)
		fn();
	unlink(path);
	return 0;
}

/* mapobj.c - maps a relocatable object file (its own build's, or the one
 * named) as a linker maps its inputs, then spins for SECONDS: a process
 * whose maps name an ET_REL file, which lp-record must pass over (libdwfl
 * cannot relocate it in a process; it crashed lp-record, recording a build
 * with --all).
 *
 * usage: mapobj FILE.o SECONDS */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct stat st;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: mapobj FILE.o SECONDS\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0 ||
	    mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
		perror(argv[1]);
		return 1;
	}
	struct timespec t0, t;
	volatile unsigned long n = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			n++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < atof(argv[2]));
	return 0;
}

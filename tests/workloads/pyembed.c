/* pyembed.c - a program that embeds CPython late, as plugin hosts (uWSGI,
 * a game, a database with a Python language) do: it spins in C for
 * SECONDS of its CPU time (a sampler's count of them, whatever else runs),
 * then dlopen()s LIBPYTHON and runs Py_BytesMain with the rest of
 * its arguments.  Its first samples show no libpython: lp-record must look
 * again when the library is mapped.
 *
 * usage: pyembed LIBPYTHON SECONDS SCRIPT [ARGS...] */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void c_spin(double seconds)
{
	double end = now() + seconds;

	while (now() < end)
		for (int i = 0; i < 10000; i++)
			sink++;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: pyembed LIBPYTHON SECONDS SCRIPT [ARGS...]\n");
		return 2;
	}
	c_spin(atof(argv[2]));
	void *lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	int (*py_main)(int, char **) = lib ? (int (*)(int, char **))dlsym(lib, "Py_BytesMain") : NULL;

	if (!py_main) {
		fprintf(stderr, "pyembed: %s\n", dlerror());
		return 1;
	}
	/* argv[2] becomes the interpreter's argv[0]: "python SCRIPT ARGS". */
	argv[2] = "python";
	return py_main(argc - 2, argv + 2);
}

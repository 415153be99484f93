/* dlhot - loads the shared library argv[1] (the libhot workload) and calls
 * its lp_hot_in_library() in a loop for argv[2] seconds (default 10), so
 * nearly every sample's leaf is in the library, a PIE-relocated module. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	void *h;
	void (*hot)(long);
	double end;

	if (argc < 2) {
		fprintf(stderr, "usage: dlhot LIBRARY [SECONDS]\n");
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlhot: %s\n", dlerror());
		return 1;
	}
	*(void **)&hot = dlsym(h, "lp_hot_in_library");
	if (!hot) {
		fprintf(stderr, "dlhot: %s\n", dlerror());
		return 1;
	}
	end = now() + (argc > 2 ? atof(argv[2]) : 10);
	while (now() < end)
		hot(100000);
	return 0;
}

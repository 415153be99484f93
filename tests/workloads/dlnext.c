/* dlnext - a program that asks dlsym(3) for the next definition of puts
 * (RTLD_NEXT), as interposers do: dlsym reads its own return address to
 * know who asks (a uretprobe on it makes that the kernel's trampoline, in
 * no object: "RTLD_NEXT used in code not dynamically loaded").  N calls
 * (argv[1], default 10); prints how many found it.  Truth: all. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10, found = 0;
	const char *err = NULL;
	for (int i = 0; i < n; i++) {
		void *p = dlsym(RTLD_NEXT, "puts");
		found += p != NULL;
		if (!p)
			err = dlerror();
	}
	printf("dlsym RTLD_NEXT found %d of %d%s%s\n", found, n, err ? ": " : "", err ? err : "");
	return 0;
}

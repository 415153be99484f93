/* throws - C++ exceptions through traced functions, and one that stays
 * inside.  For i in 0..N-1 (N from argv[1], default 3000), main calls
 * traced(i) in a try block; traced calls contained(i), which on i % 5 == 0
 * throws and catches inside itself, then returns mid(i) + 1; mid returns
 * inner(i) + 1; inner throws on i % 3 == 0 (caught in main), else returns i.
 * Truth: N calls of each of traced, mid and inner; those with i % 3 == 0
 * (ceil(N / 3)) are left by the exception, the others return (traced
 * i + 2, mid i + 1); N calls of contained, all returning.  Prints
 * "ok SUM caught K". */
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

volatile long sink;

__attribute__((noinline)) long inner(long i)
{
	if (i % 3 == 0)
		throw std::runtime_error("inner");
	sink += i;
	return i;
}

__attribute__((noinline)) long mid(long i)
{
	return inner(i) + 1;
}

__attribute__((noinline)) long contained(long i)
{
	try {
		if (i % 5 == 0)
			throw std::runtime_error("contained");
	} catch (const std::exception &) {
		sink++;
	}
	return i;
}

__attribute__((noinline)) long traced(long i)
{
	contained(i);
	return mid(i) + 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3000, ok = 0, caught = 0;
	for (long i = 0; i < n; i++) {
		try {
			ok += traced(i);
		} catch (const std::exception &) {
			caught++;
		}
	}
	printf("ok %ld caught %ld\n", ok, caught);
	return 0;
}

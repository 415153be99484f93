/* cflags: -O2 -fomit-frame-pointer -momit-leaf-frame-pointer */
/* names - C++ names for the symbolizer and lp-trace (tests/names.bats),
 * built as Debian builds C++: -O2, no frame pointers.  Each function burns
 * its own CPU in its own loop (self time, not a shared helper's): a member
 * function in a namespace, store::Shop::checkout(long); two overloads,
 * traced(int) and traced(double); a template's two instances,
 * scale<int>(int) and scale<long>(long); and an exception thrown by risky()
 * and caught by recover() every third call, which no function the tests
 * trace lies between.  noipa keeps GCC from cloning them (".constprop.0"):
 * the names are the ones the source says.  Runs argv[1] seconds (default
 * 10) of wall time. */
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <stdexcept>

static volatile unsigned long sink;
static volatile long work = 20000;

namespace store {
class Shop {
public:
	long checkout(long items);
	long total = 0;
};

__attribute__((noipa)) long Shop::checkout(long items)
{
	for (long i = 0; i < items; i++)
		sink += (unsigned long)i * 3;
	total += items;
	return total;
}
} // namespace store

__attribute__((noipa)) long traced(int n)
{
	for (int i = 0; i < n; i++)
		sink += (unsigned long)(i ^ 5);
	return n;
}

__attribute__((noipa)) long traced(double x)
{
	long n = (long)x;

	for (long i = 0; i < n; i++)
		sink += (unsigned long)i * 11;
	return n;
}

template <typename T> __attribute__((noipa)) T scale(T x)
{
	for (T i = 0; i < x; i++)
		sink += (unsigned long)i * 13;
	return x;
}

__attribute__((noipa)) long risky(long i)
{
	if (i % 3 == 0)
		throw std::runtime_error("every third");
	return i;
}

__attribute__((noipa)) long recover(long i)
{
	try {
		return risky(i);
	} catch (const std::runtime_error &) {
		return -1;
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 10);
	store::Shop shop;
	long caught = 0, calls = 0;

	while (now() < end) {
		shop.checkout(4 * work);
		traced((int)(2 * work));
		traced((double)(2 * work));
		scale<int>((int)work);
		scale<long>(work);
		caught += recover(calls++) < 0;
	}
	printf("%ld calls, %ld exceptions caught, %lu\n", calls, caught, (unsigned long)sink);
	return 0;
}

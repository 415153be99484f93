/* cflags: -shared -fPIC */
/* libthrow - a C++ shared library (built as $(O)/tests/workloads/libthrow,
 * a .so despite the name) that the C program dlthrow loads with dlopen:
 * lp_throw_guard(cb, i) calls back cb(i) inside a try block and catches
 * what it lets through; lp_throw_work(i) throws on i % 3 == 0, else returns
 * 2i.  So an exception thrown here unwinds through dlthrow's C frames
 * between the two, the traced one among them. */
#include <stdexcept>

static long caught;

extern "C" long lp_throw_guard(long (*cb)(long), long i)
{
	try {
		return cb(i);
	} catch (const std::runtime_error &) {
		caught++;
		return -1;
	}
}

extern "C" long lp_throw_work(long i)
{
	if (i % 3 == 0)
		throw std::runtime_error("lp_throw_work");
	return 2 * i;
}

extern "C" long lp_throw_caught(void)
{
	return caught;
}

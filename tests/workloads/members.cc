/* members - C++ members read through DWARF (lp-trace FUNC(q.n)): a member of
 * a base class, read through a reference and through a pointer.
 *
 *   members [COUNT]   default 200, a call of serve(q, p) each 1 ms
 *
 * Call i (1..COUNT) of serve(q, p): q.n = 5 * i, q.base_id = 1000 + i (of
 * q's base class Base), p->n = 11 * i, p->base_id = 2000 + i.
 */
#include <cstdlib>
#include <ctime>

struct Base {
	int kind;
	long base_id;
};

struct Req : Base {
	int pad;
	long n;
};

static volatile long sink;

__attribute__((noinline)) long serve(const Req &q, Req *p)
{
	sink += q.n + p->n + q.base_id;
	return sink;
}

int main(int argc, char **argv)
{
	long count = argc > 1 ? std::atol(argv[1]) : 200;
	Req q{}, p{};
	struct timespec ms = { 0, 1000000 };

	for (long i = 1; i <= count; i++) {
		q.n = 5 * i;
		q.base_id = 1000 + i;
		p.n = 11 * i;
		p.base_id = 2000 + i;
		serve(q, &p);
		nanosleep(&ms, nullptr);
	}
	return 0;
}

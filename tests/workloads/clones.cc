/* cflags: -O2 -fomit-frame-pointer */
/* clones - C++ functions compilers leave as copies (tests/names.bats),
 * each call counted by construction: N rounds of 2 calls of
 * shop::Shop::checkout(int, Shop const&), 3 of shop::price with a
 * constant mode and 1 through a pointer.  gcc -O2 leaves checkout only as
 * its .isra clone (its object argument unused) and price as itself; gcc
 * -O3 adds price's .constprop clone for the constant calls (the pointer's
 * go to price itself); clang -O2 leaves both as themselves. */
#include <cstdio>
#include <cstdlib>

namespace shop {
struct Shop;
static __attribute__((noinline)) long price(int mode, int n, const Shop *unused)
{
	volatile long x = 0;
	for (int i = 0; i < n; i++)
		x += i * mode;
	return x;
}

struct Shop {
	int base;
	__attribute__((noinline)) static long checkout(int n, const Shop &s)
	{
		volatile long x = 0;
		for (int i = 0; i < n; i++)
			x += i * 3;
		return x + n;
	}
	long run(int n) { return checkout(n, *this) + checkout(n + 1, *this); }
};
}

long (*volatile by_pointer)(int, int, const shop::Shop *) = shop::price;

int main(int argc, char **argv)
{
	shop::Shop s{ 1 };
	long t = 0;
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	for (int i = 0; i < n; i++) {
		t += s.run(i % 50);
		t += shop::price(7, i % 20, &s) + shop::price(7, i % 30, &s) + shop::price(7, 5, &s);
		t += by_pointer(2, i % 10, &s);
	}
	printf("%ld\n", t & 1);
	return 0;
}

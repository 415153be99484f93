/* inl - a line inlined into two callers, and C string arguments.
 * bump() is always inlined (even under -fno-inline): into twice() called
 * 10 times and into thrice() called 5 times, so its line marked INL runs 15
 * times in two copies.  greet(who, n) is called with "alpha", "beta",
 * "gamma" and n = 1, 2, 3, and returns strlen(who) + n. */
#include <stdio.h>
#include <string.h>

volatile int sink;

static inline __attribute__((always_inline)) int bump(int x)
{
	sink = x; /* INL */
	return x + 1;
}

__attribute__((noinline)) int twice(int x)
{
	return 2 * bump(x);
}

__attribute__((noinline)) int thrice(int x)
{
	return 3 * bump(x);
}

__attribute__((noinline)) long greet(const char *who, unsigned char n)
{
	return (long)strlen(who) + n;
}

int main(void)
{
	static const char *const names[] = { "alpha", "beta", "gamma" };
	long sum = 0;
	/* Touch the strings: BPF cannot fault their page in at greet(). */
	printf("%s %s %s\n", names[0], names[1], names[2]);
	for (int i = 0; i < 10; i++)
		sum += twice(i);
	for (int i = 0; i < 5; i++)
		sum += thrice(i);
	for (int i = 0; i < 3; i++)
		sum += greet(names[i], (unsigned char)(i + 1));
	printf("%ld\n", sum);
	return 0;
}

/* cflags: -O2 -fomit-frame-pointer */
/* rustnames - functions whose symbols are Rust-mangled, without needing a
 * Rust compiler: GCC gives each the symbol an asm label names.  v0_main is
 * mycrate::main in Rust's v0 scheme, checkout a method of mycrate::shop::Shop
 * (v0), legacy_work mycrate::work in the legacy scheme, its hash and all
 * (tests/names.bats compares with c++filt).  Runs until it has used argv[1]
 * seconds (default 10) of CPU. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

void v0_main(long n) __asm__("_RNvCs15kBYyAo9fc_7mycrate4main");
void checkout(long n) __asm__("_RNvMs_NtCs4fqI2P2rA04_7mycrate4shopNtB4_4Shop8checkout");
void legacy_work(long n) __asm__("_ZN7mycrate4work17h0123456789abcdefE");

__attribute__((noipa)) void v0_main(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i * 3;
}

__attribute__((noipa)) void checkout(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i ^ 5;
}

__attribute__((noipa)) void legacy_work(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i * 7;
}

static long cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

int main(int argc, char **argv)
{
	long end = cpu_us() + (long)(1e6 * (argc > 1 ? atof(argv[1]) : 10));

	while (cpu_us() < end) {
		v0_main(100000);
		checkout(100000);
		legacy_work(100000);
	}
	return 0;
}

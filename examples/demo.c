/* demo - a small request-handling service whose slow path is known.
 *
 *   demo [SECONDS]       serve requests for SECONDS (default: until killed)
 *
 * Requests arrive about every millisecond.  handle_request() parses the
 * request and builds a response (about 0.5 ms of CPU together); one request
 * in twelve (id % 12 == 7) finds its index stale and calls rebuild_index(),
 * which burns about 20 ms of CPU.  So the slowest 10% of requests are slow
 * because of rebuild_index, and nothing else: lp's demo must name it.  (One
 * in twelve, not one in ten, so that the p90 cut falls among the fast
 * requests and not on the quickest slow one.)
 *
 * The busy loops are plain user code (no system calls inside), so every
 * sample taken in them has the function itself as its leaf frame.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Burns CPU in the calling function's own loop for about ns of wall time,
 * looking at the clock only every few thousand iterations. */
#define BURN(ns)                                                        \
	do {                                                            \
		int64_t until_ = now_ns() + (ns);                       \
		uint64_t x_ = sink;                                     \
		do {                                                    \
			for (int i_ = 0; i_ < 4000; i_++)               \
				x_ = x_ * 6364136223846793005ULL + 1442695040888963407ULL; \
			sink = x_;                                      \
		} while (now_ns() < until_);                            \
	} while (0)

__attribute__((noinline)) void parse_request(int id)
{
	BURN(200000);	/* 0.2 ms */
	sink += id;
}

__attribute__((noinline)) void rebuild_index(int id)
{
	BURN(20000000);	/* 20 ms: the slow path */
	sink += id;
}

__attribute__((noinline)) void build_response(int id)
{
	BURN(300000);	/* 0.3 ms */
	sink += id;
}

__attribute__((noinline)) int handle_request(int id)
{
	parse_request(id);
	if (id % 12 == 7)
		rebuild_index(id);
	build_response(id);
	return id % 12 == 7;
}

__attribute__((noinline)) void wait_for_request(void)
{
	usleep(1000);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	int64_t end = seconds > 0 ? now_ns() + (int64_t)(seconds * 1e9) : INT64_MAX;
	printf("demo: pid %d serving requests\n", (int)getpid());
	fflush(stdout);
	for (int id = 0; now_ns() < end; id++) {
		wait_for_request();
		handle_request(id);
	}
	return 0;
}

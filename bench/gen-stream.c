/* gen-stream - a synthetic recording for bench/pipeline.sh, written with
 * lp's own stream writer: SAMPLES samples and SPANS spans of probe "req".
 *
 *   gen-stream SAMPLES SPANS THREADS SAMPLES.lp SPANS.lp
 *
 * Each thread is sampled every millisecond.  Its requests follow each other:
 * a request covers k consecutive samples (k from 1 to 2*mean-1, mean =
 * SAMPLES/SPANS - 2), then 2 samples fall between requests.  A request's
 * stack is one of 64 distinct stacks 8 to 23 frames deep; the slowest ones
 * (k above 1.8*mean) run a "slow_path" frame.  Both files are in time
 * order, as lp-record and lp-trace write them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/stream.h"
#include "base/util.h"

#define NSTACKS 64

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct thread {
	int64_t t;		/* next sample time */
	int left;		/* samples left in the current request, or between */
	int in_request;
	int64_t start;
	int slow;
};

int main(int argc, char **argv)
{
	lp_init(argc, argv);
	if (argc != 6)
		lp_die(2, "usage: gen-stream SAMPLES SPANS THREADS SAMPLES.lp SPANS.lp");
	uint64_t nsamples = strtoull(argv[1], NULL, 10), nspans = strtoull(argv[2], NULL, 10);
	int nthreads = atoi(argv[3]);
	if (!nsamples || !nspans || nthreads < 1 || nsamples / nspans < 4)
		lp_die(2, "need SAMPLES >= 4 * SPANS > 0 and THREADS > 0");
	int mean = (int)(nsamples / nspans) - 2;
	FILE *fs = fopen(argv[4], "w"), *fp = fopen(argv[5], "w");
	if (!fs || !fp)
		lp_die(1, "cannot create the outputs");
	static char bs[1 << 20], bp[1 << 20];
	setvbuf(fs, bs, _IOFBF, sizeof(bs));
	setvbuf(fp, bp, _IOFBF, sizeof(bp));
	struct lp_writer *ws = lp_writer__new(fs), *wp = lp_writer__new(fp);
	struct lp_dict *d = lp_dict__new();
	struct lp_attrs_buf hb = { 0 };
	lp_attrs_buf__add(&hb, "clock", "monotonic");
	lp_attrs_buf__add(&hb, "host", "bench");
	lp_attrs_buf__add(&hb, "period_ns", "1000000");
	struct lp_header h = { 1, lp_attrs_buf__attrs(&hb) };
	lp_writer__header(ws, &h);
	lp_writer__header(wp, &h);

	/* 64 stacks for requests, 63 normal and the slow one at [0]; one idle. */
	const struct lp_stack *stacks[NSTACKS], *idle;
	const struct lp_frame *fr[32];
	for (int s = 0; s < NSTACKS; s++) {
		int depth = 8 + s % 16;
		char sym[64];
		fr[0] = lp_dict__frame(d, 'u', 0, "/usr/bin/svc", "main", "svc.c:10");
		fr[1] = lp_dict__frame(d, 'u', 0, "/usr/bin/svc", "serve", "svc.c:20");
		fr[2] = lp_dict__frame(d, 'u', 0, "/usr/bin/svc", "handle_request", "svc.c:30");
		for (int i = 3; i < depth; i++) {
			snprintf(sym, sizeof(sym), s == 0 && i == 3 ? "slow_path" : "fn_%d_%d", s % 7, i);
			fr[i] = lp_dict__frame(d, 'u', 0, "/usr/bin/svc", sym, "");
		}
		stacks[s] = lp_dict__stack(d, fr, depth);
	}
	fr[2] = lp_dict__frame(d, 'u', 0, "/usr/bin/svc", "wait_for_request", "svc.c:40");
	idle = lp_dict__stack(d, fr, 3);

	struct thread *th = lp_calloc(nthreads, sizeof(*th));
	for (int i = 0; i < nthreads; i++)
		th[i].t = 1000000000LL + i * 1000000LL / nthreads;
	uint64_t written = 0, spans = 0;
	struct lp_sample smp = { .cpu = 0, .comm = "svc", .event = "cpu-clock", .weight = 1000000 };
	struct lp_span sp = { .probe = "req", .depth = 0 };
	int next_thread = 0;
	while (written < nsamples) {
		struct thread *t = &th[next_thread];
		int tid = 1000 + next_thread;
		next_thread = (next_thread + 1) % nthreads;
		if (t->left == 0) {
			if (t->in_request) {
				/* The request ends just after its last sample. */
				if (spans < nspans) {
					sp.start_ns = t->start;
					sp.end_ns = t->t - 1000000 + 1000;
					sp.pid = 1000;
					sp.tid = tid;
					if (lp_writer__span(wp, &sp) < 0)
						lp_die(1, "write failed");
					spans++;
				}
				t->in_request = 0;
				t->left = 2;
			} else {
				t->in_request = 1;
				t->left = 1 + (int)(next() % (uint64_t)(2 * mean - 1));
				t->slow = t->left > mean * 18 / 10;
				t->start = t->t - 500000;
			}
		}
		smp.time_ns = t->t;
		smp.pid = 1000;
		smp.tid = tid;
		smp.stack = !t->in_request ? idle : t->slow ? stacks[0] : stacks[1 + next() % (NSTACKS - 1)];
		if (lp_writer__sample(ws, &smp) < 0)
			lp_die(1, "write failed");
		written++;
		t->left--;
		t->t += 1000000;
	}
	lp_writer__free(ws);
	lp_writer__free(wp);
	if (fclose(fs) == EOF || fclose(fp) == EOF)
		lp_die(1, "write failed");
	fprintf(stderr, "gen-stream: %" PRIu64 " samples, %" PRIu64 " spans\n", written, spans);
	lp_dict__free(d);
	lp_attrs_buf__free(&hb);
	free(th);
	return 0;
}

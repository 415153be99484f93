/* cflags: -O2 -fno-optimize-sibling-calls -fno-shrink-wrap */
/* evloop - an epoll event loop on one thread, whose requests are each
 * handled in several short callbacks interleaved with the other requests in
 * flight (lp issue 18: a request keyed by a pointer, not one call).
 *
 * new_request(id) mallocs a struct req and returns it (the key; or id,
 * which every callback's r->id is).  Each
 * request owns an eventfd in one epoll set; its next phase is armed by a
 * write to that fd, and the loop runs the phase's callback, the request its
 * first argument (struct req *r), when epoll reports the fd ready: requests
 * interleave in the order the kernel reports readiness.  After the last
 * phase free_request(r) ends it and a new one starts: INFLIGHT in flight.
 *
 * The truth by construction, in units of work (a unit: a fixed number of
 * iterations of one loop, ~1 us as calibrated, so that CPU shares are
 * shares of units whatever preempts): a fast request (id % 25 != 0) runs
 * on_read, on_process, on_write, each fast_work(r, 20); a slow one (id % 25
 * == 0) the same with twelve on_slow between on_process and on_write, each
 * slow_path(r, 125).  Only slow requests call slow_path: 1500 of the 3000
 * units of 25 requests, 50%.  Each phase waits a round of the loop (a turn
 * of all requests in flight): 15 rounds for a slow request, 3 for a fast one
 * (five times as long: a fast request stalled by other load stays below).
 *
 *   evloop [-v] [-i USEC] [SECONDS] [INFLIGHT]   defaults 5 and 100
 *
 * SIGUSR1 ends the SECONDS at once (reqwork.h).
 *
 * -i idles the loop USEC after each batch of ready callbacks (before the
 * drain): the time requests wait while no callback runs.
 *
 * After SECONDS no request starts and those in flight finish (all made are
 * freed) at the same pace: after each batch the loop sleeps until a round of
 * INFLIGHT would have ended, or the last slow requests, alone in short
 * rounds, would be as quick as fast ones.  Then the truth, on stderr:
 *   evloop: requests=N slow=M slow_path_units=A total_units=B iters_per_unit=I
 * then, of the requests begun and ended before the drain, where their time
 * went, for each kind (fast, slow): in their own callbacks, in other
 * requests' callbacks (their waits while the loop ran others), and the
 * rest (the loop itself, idling), each callback timed around its call:
 *   evloop: waits kind=K requests=N life_ns=L own=O% others=T% none=R%
 * and with -v the latencies (new_request to free_request) of both kinds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

struct req {
	int fd;		/* its eventfd, in the epoll set */
	int phase;	/* phases done */
	int slow;
	long id;	/* not first: a key read as r->id is read at its offset */
	int64_t t0;	/* when new_request made it */
	uint64_t acc;	/* the work's result, so that it is done */
	int64_t cb0;	/* cb_ns when it was made */
	int64_t own;	/* its callbacks' time */
};

#include "reqwork.h"

static int ep;
static int64_t cb_ns;		/* every callback's time so far */
static int64_t steady_end;	/* when requests stop starting */
static double waits[2][4];	/* per kind: requests, life, own, others (ns) */

__attribute__((noinline)) struct req *new_request(long id)
{
	struct req *r = calloc(1, sizeof(*r));

	if (!r)
		abort();
	r->id = id;
	r->slow = id % SLOW_EVERY == 0;
	r->t0 = now_ns();
	r->cb0 = cb_ns;
	return r;
}

__attribute__((noinline)) void free_request(struct req *r)
{
	int64_t life = now_ns() - r->t0;

	add_latency(r->slow, life);
	if (now_ns() < steady_end) {
		double *w = waits[r->slow];
		w[0]++;
		w[1] += (double)life;
		w[2] += (double)r->own;
		w[3] += (double)(cb_ns - r->cb0 - r->own);
	}
	epoll_ctl(ep, EPOLL_CTL_DEL, r->fd, NULL);
	close(r->fd);
	free(r);
}

static void start(long id)
{
	struct req *r = new_request(id);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = r };

	r->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (r->fd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, r->fd, &ev) < 0)
		abort();
	eventfd_write(r->fd, 1);	/* arms its first phase */
}

int main(int argc, char **argv)
{
	int v = 0, c;
	long idle_us = 0;

	while ((c = getopt(argc, argv, "vi:")) != -1) {
		if (c == 'v')
			v = 1;
		else if (c == 'i')
			idle_us = atol(optarg);
		else
			return fprintf(stderr, "usage: evloop [-v] [-i USEC] [SECONDS] [INFLIGHT]\n"), 2;
	}
	double secs = optind < argc ? atof(argv[optind]) : 5;
	long inflight = optind + 1 < argc ? atol(argv[optind + 1]) : 100;
	long id = 0, live = 0, callbacks = 0;
	int64_t t0, end, per_cb = 0, pace = 0;
	struct epoll_event evs[64];
	struct timespec idle = { idle_us / 1000000, idle_us % 1000000 * 1000 };

	if (secs <= 0 || inflight < 1 || idle_us < 0)
		return fprintf(stderr, "usage: evloop [-v] [-i USEC] [SECONDS] [INFLIGHT]\n"), 2;
	calibrate_unit();

	ep = epoll_create1(EPOLL_CLOEXEC);	/* if not, start aborts */
	end_on_usr1();
	end = steady_end = (t0 = now_ns()) + (int64_t)(secs * 1e9);
	for (; live < inflight; live++)
		start(++id);
	while (live > 0) {
		int n = epoll_wait(ep, evs, 64, -1);
		long was = live;

		if (usr1_seen && end > now_ns())
			end = steady_end = now_ns();
		if (n < 0)
			continue;	/* EINTR: SIGUSR1 */

		for (int i = 0; i < n; i++) {
			struct req *r = evs[i].data.ptr;
			int last = r->slow ? 2 + SLOW_PHASES : 2;
			eventfd_t one;

			eventfd_read(r->fd, &one);	/* not ready until armed */
			int64_t c0 = now_ns();
			if (r->phase == 0)
				on_read(r);
			else if (r->phase == 1)
				on_process(r);
			else if (r->phase < last)
				on_slow(r);
			else
				on_write(r);
			c0 = now_ns() - c0;
			cb_ns += c0;
			r->own += c0;
			callbacks++;
			if (++r->phase <= last) {
				eventfd_write(r->fd, 1);	/* arms the next */
			} else if (free_request(r), now_ns() < end) {
				start(++id);
			} else {
				if (!per_cb) {	/* a callback's wall time so far */
					per_cb = (now_ns() - t0) / callbacks;
					pace = now_ns();
				}
				live--;
			}
		}
		/* Draining: these n callbacks were n / was of a round, which
		 * would have taken INFLIGHT callbacks' time: wait until then. */
		if (!per_cb && idle_us)
			nanosleep(&idle, NULL);
		if (per_cb && live > 0) {
			pace += n * inflight * per_cb / was;
			struct timespec ts = { pace / 1000000000, pace % 1000000000 };

			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		}
	}
	fprintf(stderr, "evloop: requests=%ld slow=%ld slow_path_units=%ld "
		"total_units=%ld iters_per_unit=%ld\n", nlat[0] + nlat[1], nlat[1],
		slow_units, total_units, iters_per_unit);
	for (int s = 0; s < 2; s++) {
		double *w = waits[s], life = w[1] > 0 ? w[1] : 1;
		fprintf(stderr, "evloop: waits kind=%s requests=%.0f life_ns=%.0f own=%.1f%% "
			"others=%.1f%% none=%.1f%%\n", s ? "slow" : "fast", w[0], w[1],
			100 * w[2] / life, 100 * w[3] / life, 100 * (1 - (w[2] + w[3]) / life));
	}
	if (v)
		print_latencies("evloop");
	return 0;
}

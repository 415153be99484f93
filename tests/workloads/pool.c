/* cflags: -O2 -fno-optimize-sibling-calls -fno-shrink-wrap */
/* pool - a thread pool that hands each request between threads (lp issue
 * 18: a request keyed by a pointer, not one call; evloop.c is the kind on
 * one thread).  A request's phases are tasks on the workers' queues (a
 * mutex, and a condition variable each), and each phase is queued for the
 * next worker in a ring: every phase runs on another thread than the one
 * before, whatever the scheduler does.  (On one shared queue, a machine
 * whose other CPU was busy let one worker run a request's every phase in
 * its time slice: 42% ended where they started.)
 *
 * new_request(id) mallocs a struct req and returns it (the key).  Each
 * callback takes it as its first argument (struct req *r); after each, the
 * worker queues the request's next phase at the tail of the next worker's
 * queue; after the last it calls free_request(r) and queues a new
 * request's first: INFLIGHT in flight.
 *
 * The truth by construction is evloop.c's, in units of work (a fixed number
 * of iterations of one loop, ~1 us as calibrated): a fast request (id % 25
 * != 0) runs on_read, on_process, on_write, each fast_work(r, 20); a slow
 * one the same with twelve on_slow before on_write, each slow_path(r, 125):
 * 1500 of the 3000 units of 25 requests, 50%, are slow_path's.  Each phase
 * waits its turn through the queue: 15 turns for a slow request, 3 for a
 * fast (five times as long: a fast request stalled by other load stays
 * below).
 *
 *   pool [-v] [SECONDS] [THREADS] [INFLIGHT]   defaults 5, 4 and 100
 *
 * SIGUSR1 ends the SECONDS at once (reqwork.h).
 *
 * After SECONDS no request starts and those in flight finish (all made are
 * freed) at the same pace: a phase queued then waits the turn a queue of
 * INFLIGHT would give it.  Then the truth on stderr, with how many requests
 * had phases on more than one thread, on one line:
 *   pool: requests=N slow=M slow_path_units=A total_units=B iters_per_unit=I
 *         threads=T multi_thread=K
 * and with -v the latencies (new_request to free_request) of both kinds.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct req {
	int phase, slow;	/* phases done; whether id % 25 == 0 */
	int worker;	/* the worker of its phases so far, -1 if several */
	int64_t t0;	/* when new_request made it */
	int64_t due;	/* draining: when its turn in a full queue would come */
	uint64_t acc;	/* the work's result, so that it is done */
	struct req *next;	/* in the queue */
};

#include "reqwork.h"

static long multi, last_id, live, inflight, threads, tasks;
static int64_t t0, end, per_task;	/* per_task: the pool's, once draining */
#define MAX_THREADS 64
static struct queue {
	struct req *head, *tail;	/* phases to run */
	pthread_cond_t cv;
} q[MAX_THREADS];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) struct req *new_request(long id)
{
	struct req *r = calloc(1, sizeof(*r));

	if (!r)
		abort();
	r->slow = id % SLOW_EVERY == 0;
	r->t0 = now_ns();
	return r;
}

__attribute__((noinline)) void free_request(struct req *r)
{
	int64_t ns = now_ns() - r->t0;

	pthread_mutex_lock(&mu);
	add_latency(r->slow, ns);
	multi += r->worker < 0;
	pthread_mutex_unlock(&mu);
	free(r);
}

/* Queues r's next phase for worker k; under mu. */
static void push(struct req *r, long k)
{
	struct queue *w = &q[k % threads];

	r->next = NULL;
	*(w->tail ? &w->tail->next : &w->head) = r;
	w->tail = r;
	pthread_cond_signal(&w->cv);
}

static void *worker(void *arg)
{
	int me = (int)(intptr_t)arg;

	for (;;) {
		struct queue *w = &q[me];

		pthread_mutex_lock(&mu);
		while (!w->head && live > 0)
			pthread_cond_wait(&w->cv, &mu);
		struct req *r = w->head;
		if (r && !(w->head = r->next))
			w->tail = NULL;
		tasks += !!r;
		pthread_mutex_unlock(&mu);
		if (!r)
			return NULL;	/* all done */
		struct timespec due = { r->due / 1000000000, r->due % 1000000000 };
		if (r->due)
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL);
		int last = r->slow ? 2 + SLOW_PHASES : 2;
		if (r->phase == 0)
			on_read(r);
		else if (r->phase == 1)
			on_process(r);
		else if (r->phase < last)
			on_slow(r);
		else
			on_write(r);
		if (r->phase == 0 || r->worker != me)
			r->worker = r->phase == 0 ? me : -1;
		if (++r->phase > last) {
			free_request(r);
			r = now_ns() < end && !usr1_seen ?
				    new_request(__atomic_add_fetch(&last_id, 1, __ATOMIC_RELAXED)) : NULL;
		}
		pthread_mutex_lock(&mu);
		if (!r && !per_task)	/* the pool's wall time a task so far */
			per_task = (now_ns() - t0) / tasks;
		if (r) {
			/* draining: the turn a full queue would give it */
			r->due = per_task ? now_ns() + inflight * per_task : 0;
			push(r, me + 1);
		} else if (--live == 0) {
			for (long k = 0; k < threads; k++)
				pthread_cond_broadcast(&q[k].cv);
		}
		pthread_mutex_unlock(&mu);
	}
}

int main(int argc, char **argv)
{
	int v = argc > 1 && !strcmp(argv[1], "-v");
	double secs = argc > 1 + v ? atof(argv[1 + v]) : 5;
	pthread_t tid[MAX_THREADS];

	threads = argc > 2 + v ? atol(argv[2 + v]) : 4;
	inflight = argc > 3 + v ? atol(argv[3 + v]) : 100;
	if (secs <= 0 || threads < 1 || threads > MAX_THREADS || inflight < 1)
		return fprintf(stderr, "usage: pool [-v] [SECONDS] [THREADS (1-64)] [INFLIGHT]\n"), 2;
	calibrate_unit();

	end_on_usr1();
	end = (t0 = now_ns()) + (int64_t)(secs * 1e9);
	for (long k = 0; k < threads; k++)
		pthread_cond_init(&q[k].cv, NULL);
	for (; live < inflight; live++)
		push(new_request(++last_id), live);
	for (long i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, worker, (void *)(intptr_t)i))
			abort();
	for (long i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	fprintf(stderr, "pool: requests=%ld slow=%ld slow_path_units=%ld total_units=%ld "
		"iters_per_unit=%ld threads=%ld multi_thread=%ld\n", nlat[0] + nlat[1],
		nlat[1], slow_units, total_units, iters_per_unit, threads, multi);
	if (v)
		print_latencies("pool");
	return 0;
}

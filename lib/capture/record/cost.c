/* cost.c - the calibrations of cost.h: a thread spinning on the clock, whose
 * gaps the samples taken of it widen, and a pipe ping-pong whose round trips
 * the switch tracing lengthens.  Built with frame pointers (Makefile), so a
 * sample of the spinning thread walks LP_SPIN_DEPTH frames, as a target's
 * would. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "capture/record/cost.h"
#include "base/util.h"

/* Of sorted v[0..n). */
static double median_sorted(const double *v, size_t n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* 1.4826 x the median absolute deviation from m: the standard deviation of
 * a normal distribution, undisturbed by a few hits far out (a tick or an
 * interrupt of another device in the same gap). */
static double robust_sd(const double *v, size_t n, double m)
{
	double *d = lp_calloc(n, sizeof(*d)), sd;

	for (size_t i = 0; i < n; i++)
		d[i] = fabs(v[i] - m);
	qsort(d, n, sizeof(*d), lp_cmp_double);
	sd = 1.4826 * median_sorted(d, n);
	free(d);
	return sd;
}

/* Sorts v; the mean of v less the `trim` part of it at each end, and the
 * robust sd. */
static void summarize(double *v, size_t n, double trim, struct lp_cost_stats *out)
{
	size_t cut = (size_t)(n * trim), k = 0;
	double sum = 0;

	qsort(v, n, sizeof(*v), lp_cmp_double);
	for (size_t i = cut; i < n - cut; i++, k++)
		sum += v[i];
	out->ns = sum / k;
	out->sd_ns = robust_sd(v, n, median_sorted(v, n));
	out->n = n;
}

/* The calibration's threads are named so: the producer's own, never a
 * target's (tests look for the name in recordings of the whole system). */
static void name_thread(void)
{
	pthread_setname_np(pthread_self(), LP_CAL_THREAD_NAME);
}

/* The thread's context switches so far: a gap in which it changed was not
 * all the sample's (the thread waited for the CPU). */
static long switches(void)
{
	struct rusage u;

	getrusage(RUSAGE_THREAD, &u);
	return u.ru_nvcsw + u.ru_nivcsw;
}

/* A long gap: the loop saw no clock from start to end; from end to resume
 * it was checking for a switch, which a sample there would lengthen. */
struct lp_gap {
	int64_t start, end, resume;
	bool switched;
};

/* Gaps kept at first: some 15,000 a second come here (ticks, samples,
 * other devices' interrupts); more make room as they come. */
#define LP_SPIN_GAPS 16384
/* Gaps timed at the start, all of them, for the loop's baseline. */
#define LP_SPIN_WARMUP 4096

struct lp_spin {
	pthread_t thread;
	int64_t duration_ns;
	uint32_t stack_bytes;
	_Atomic pid_t tid;
	_Atomic bool done;
	int64_t start_ns, end_ns;	/* when the gaps were kept */
	double baseline_ns;		/* the loop's median gap */
	struct lp_gap *gaps;
	size_t ngaps, cap;
};

__attribute__((noinline)) static void spin(struct lp_spin *s)
{
	int64_t warm[LP_SPIN_WARMUP], prev = lp_monotonic_ns(), t, threshold, end;
	long sw = switches();

	for (size_t i = 0; i < LP_SPIN_WARMUP; i++) {
		t = lp_monotonic_ns();
		warm[i] = t - prev;
		prev = t;
	}
	qsort(warm, LP_SPIN_WARMUP, sizeof(*warm), lp_cmp_i64);
	s->baseline_ns = (double)warm[LP_SPIN_WARMUP / 2];
	/* Long: what no iteration of the loop takes by itself, and shorter
	 * than any interrupt. */
	threshold = 4 * warm[LP_SPIN_WARMUP / 2] + 100;
	atomic_store(&s->tid, (pid_t)syscall(SYS_gettid));
	prev = s->start_ns = lp_monotonic_ns();
	end = prev + s->duration_ns;
	while (prev < end) {
		t = lp_monotonic_ns();
		if (t - prev > threshold) {
			struct lp_gap *g = &s->gaps[s->ngaps++];
			long now_sw = switches();

			g->start = prev;
			g->end = t;
			g->switched = now_sw != sw;
			sw = now_sw;
			/* Between end and resume: what a sample there costs is
			 * not known, so none there is counted. */
			if (s->ngaps == s->cap) {
				s->cap *= 2;
				s->gaps = lp_reallocarray(s->gaps, s->cap, sizeof(*s->gaps));
				g = &s->gaps[s->ngaps - 1];
			}
			t = g->resume = lp_monotonic_ns();
		}
		prev = t;
	}
	s->end_ns = prev;
}

/* Calls down `depth` frames, then spins: a sample walks them all. */
__attribute__((noinline)) static int descend(struct lp_spin *s, int depth)
{
	if (depth <= 1)
		spin(s);
	else
		descend(s, depth - 1);
	/* Not a tail call: the frame stays. */
	__asm__ volatile("" ::: "memory");
	return depth;
}

static void *spin_thread(void *arg)
{
	struct lp_spin *s = arg;
	/* The stack a DWARF sample copies, there above the spinning frames. */
	volatile char *pad = __builtin_alloca(s->stack_bytes + 1);

	name_thread();
	memset((char *)pad, 0, s->stack_bytes + 1);
	descend(s, LP_SPIN_DEPTH);
	pad[0] = 1;
	atomic_store(&s->done, true);
	return NULL;
}

struct lp_spin *lp_spin__start(int64_t duration_ns, uint32_t stack_bytes)
{
	struct lp_spin *s = lp_calloc(1, sizeof(*s));
	int err;

	s->duration_ns = duration_ns;
	s->stack_bytes = stack_bytes;
	s->cap = LP_SPIN_GAPS;
	s->gaps = lp_calloc(s->cap, sizeof(*s->gaps));
	err = lp_thread_start(&s->thread, spin_thread, s);
	if (err) {
		free(s->gaps);
		free(s);
		errno = err;
		return NULL;
	}
	while (!atomic_load(&s->tid))
		sched_yield();
	return s;
}

pid_t lp_spin__tid(const struct lp_spin *s)
{
	return atomic_load(&s->tid);
}

bool lp_spin__done(const struct lp_spin *s)
{
	return atomic_load(&s->done);
}

void lp_spin__join(struct lp_spin *s)
{
	pthread_join(s->thread, NULL);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

int lp_spin__cost(const struct lp_spin *s, const uint64_t *times, size_t n,
		  struct lp_cost_stats *out)
{
	uint64_t *t = lp_calloc(n ? n : 1, sizeof(*t));
	double *cost = lp_calloc(n ? n : 1, sizeof(*cost));
	size_t k = 0, g = 0;

	memcpy(t, times, n * sizeof(*t));
	qsort(t, n, sizeof(*t), cmp_u64);
	/* Both sorted by time: one pass.  A gap holding two samples (never
	 * at these rates) counts once, for the first. */
	for (size_t i = 0; i < n; i++) {
		int64_t x = (int64_t)t[i];

		while (g < s->ngaps && s->gaps[g].resume <= x)
			g++;
		if (g == s->ngaps)
			break;
		const struct lp_gap *gp = &s->gaps[g];

		/* Not in a gap: in the loop's own time (a sample shorter than
		 * the threshold: never here), or while switches were read. */
		if (x <= gp->start || x >= gp->end || gp->switched)
			continue;
		if (i > 0 && (int64_t)t[i - 1] > gp->start)
			continue;
		cost[k++] = (double)(gp->end - gp->start) - s->baseline_ns;
	}
	free(t);
	if (!k) {
		free(cost);
		return -1;
	}
	/* A sample's cost has a tail of its own (cache misses, a tick in the
	 * same gap): the middle 80%. */
	summarize(cost, k, 0.1, out);
	free(cost);
	return 0;
}

void lp_spin__free(struct lp_spin *s)
{
	if (!s)
		return;
	free(s->gaps);
	free(s);
}

struct lp_pingpong {
	pthread_t a, b;
	_Atomic pid_t tid_a, tid_b;
	int ab[2], ba[2], cmd[2], fin[2];
	size_t rounds;
	int64_t *out;
	_Atomic bool done;
	bool started_a, started_b;
	int cpu;		/* the CPU they share, -1 if not pinned */
	long blocks0;		/* both threads' blocks when the run started */
};

/* B: echoes every byte; ends at A's end of the pipe closing. */
static void *pong_thread(void *arg)
{
	struct lp_pingpong *p = arg;
	char c;

	name_thread();
	atomic_store(&p->tid_b, (pid_t)syscall(SYS_gettid));
	while (read(p->ab[0], &c, 1) == 1)
		if (write(p->ba[1], &c, 1) != 1)
			break;
	return NULL;
}

/* A: on each command byte, runs p->rounds timed round trips; ends at the
 * command pipe closing. */
static void *ping_thread(void *arg)
{
	struct lp_pingpong *p = arg;
	char c;

	name_thread();
	atomic_store(&p->tid_a, (pid_t)syscall(SYS_gettid));
	while (read(p->cmd[0], &c, 1) == 1) {
		/* Acquires what lp_pingpong__run wrote before its store of
		 * done (rounds, out): a pipe is no ordering a race detector
		 * sees. */
		(void)atomic_load(&p->done);
		for (size_t i = 0; i < p->rounds; i++) {
			int64_t t0 = lp_monotonic_ns();

			if (write(p->ab[1], &c, 1) != 1 || read(p->ba[0], &c, 1) != 1)
				break;
			p->out[i] = lp_monotonic_ns() - t0;
		}
		atomic_store(&p->done, true);
		/* Non-blocking: a byte already there wakes the waiter as
		 * well. */
		ssize_t w = write(p->fin[1], &c, 1);
		(void)w;
	}
	close(p->ab[1]);
	return NULL;
}

/* Both on one CPU, the first the process may use: each block then hands
 * the CPU to the other thread, and every step of a round trip is on the
 * clock (on two CPUs a switch-out overlaps the other's run). */
static void pin_together(struct lp_pingpong *p)
{
	cpu_set_t set, one;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (pthread_setaffinity_np(p->a, sizeof(one), &one) == 0 &&
		    pthread_setaffinity_np(p->b, sizeof(one), &one) == 0)
			p->cpu = cpu;
		return;
	}
}

struct lp_pingpong *lp_pingpong__new(void)
{
	struct lp_pingpong *p = lp_calloc(1, sizeof(*p));
	int err;

	p->ab[0] = p->ab[1] = p->ba[0] = p->ba[1] = p->cmd[0] = p->cmd[1] = -1;
	p->fin[0] = p->fin[1] = -1;
	p->cpu = -1;
	if (pipe2(p->ab, O_CLOEXEC) < 0 || pipe2(p->ba, O_CLOEXEC) < 0 ||
	    pipe2(p->cmd, O_CLOEXEC) < 0 || pipe2(p->fin, O_CLOEXEC) < 0 ||
	    fcntl(p->fin[1], F_SETFL, O_NONBLOCK) < 0)
		goto fail;
	err = lp_thread_start(&p->b, pong_thread, p);
	if (err)
		goto fail_err;
	p->started_b = true;
	err = lp_thread_start(&p->a, ping_thread, p);
	if (err)
		goto fail_err;
	p->started_a = true;
	pin_together(p);
	while (!atomic_load(&p->tid_a) || !atomic_load(&p->tid_b))
		sched_yield();
	return p;
fail_err:
	errno = err;
fail:
	err = errno;
	lp_pingpong__free(p);
	errno = err;
	return NULL;
}

/* How many times thread tid of this process blocked so far (its voluntary
 * context switches); 0 when it cannot be read. */
static long blocks(pid_t tid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	long n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	f = fopen(path, "r");
	while (f && getline(&line, &cap, f) > 0)
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
			break;
	free(line);
	if (f)
		fclose(f);
	return n;
}

static long both_blocks(const struct lp_pingpong *p)
{
	return blocks(atomic_load(&p->tid_a)) + blocks(atomic_load(&p->tid_b));
}

void lp_pingpong__run(struct lp_pingpong *p, size_t rounds, int64_t *out)
{
	char c = 'x';

	p->blocks0 = both_blocks(p);
	p->rounds = rounds < LP_PINGPONG_MAX_ROUNDS ? rounds : LP_PINGPONG_MAX_ROUNDS;
	p->out = out;
	atomic_store(&p->done, false);
	if (write(p->cmd[1], &c, 1) != 1)
		atomic_store(&p->done, true);
}

bool lp_pingpong__done(const struct lp_pingpong *p)
{
	return atomic_load(&p->done);
}

int lp_pingpong__cpu(const struct lp_pingpong *p)
{
	return p->cpu;
}

void lp_pingpong__wait(struct lp_pingpong *p)
{
	char c;

	while (!atomic_load(&p->done))
		if (read(p->fin[0], &c, 1) != 1 && errno != EINTR)
			return;
}

size_t lp_pingpong__blocks(const struct lp_pingpong *p)
{
	long n = both_blocks(p) - p->blocks0;

	return n > 0 ? (size_t)n : 0;
}

void lp_pingpong__free(struct lp_pingpong *p)
{
	if (!p)
		return;
	/* A ends at its command pipe's end, and closes B's pipe; B ends. */
	if (p->cmd[1] >= 0)
		close(p->cmd[1]);
	if (p->started_a)
		pthread_join(p->a, NULL);
	else if (p->ab[1] >= 0)
		close(p->ab[1]);
	if (p->started_b)
		pthread_join(p->b, NULL);
	int fds[] = { p->ab[0], p->ba[0], p->ba[1], p->cmd[0], p->fin[0], p->fin[1] };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(p);
}

/* The mean of round trips v[0..n) less the slowest and fastest 2%, and
 * their robust variance.  Little is cut: a blocked interval's tracing has a
 * tail of its own, part of its mean (the ring's wakeups of lp-record, the
 * kernel's refills and frees of the per-thread map's entries, in
 * interrupts on the same CPU); what is cut is the odd round trip that
 * waited milliseconds for the CPU. */
static double center_i64(const int64_t *v, size_t n, double *var)
{
	double *d = lp_calloc(n, sizeof(*d));
	struct lp_cost_stats st;

	for (size_t i = 0; i < n; i++)
		d[i] = (double)v[i];
	summarize(d, n, 0.02, &st);
	*var = st.sd_ns * st.sd_ns;
	free(d);
	return st.ns;
}

int lp_cost__from_round_trips(int64_t *const *off, int64_t *const *on, const size_t *blocks_on,
			      size_t pairs, size_t rounds, struct lp_cost_stats *out)
{
	double *diff, var_off = 0, var_on = 0, v;
	size_t k, n = 0, used = 0;

	if (!pairs || !rounds)
		return -1;
	diff = lp_calloc(pairs, sizeof(*diff));
	for (k = 0; k < pairs; k++) {
		if (!blocks_on[k])
			continue;
		/* Blocked intervals a round trip holds: two when each
		 * thread blocks in its read, one when a wakeup preempts
		 * the writer, which then finds its byte waiting. */
		double per_round = (double)blocks_on[k] / rounds;
		double m_off = center_i64(off[k], rounds, &v);

		var_off += v / per_round;
		diff[used++] = (center_i64(on[k], rounds, &v) - m_off) / per_round;
		var_on += v / per_round;
		n += blocks_on[k];
	}
	if (!used) {
		free(diff);
		return -1;
	}
	qsort(diff, used, sizeof(*diff), lp_cmp_double);
	out->ns = median_sorted(diff, used);
	/* A round trip's added variance is that of its intervals' costs. */
	out->sd_ns = var_on > var_off ? sqrt((var_on - var_off) / used) : 0;
	out->n = n;
	free(diff);
	return 0;
}

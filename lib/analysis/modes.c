/* modes.c - modes and valleys of a latency distribution (see modes.h).
 *
 * Why ln(duration): latencies are multiplicative (a cache miss doubles a
 * call, a disk read multiplies it by 100), so populations are lognormal-ish
 * and a slow mode 13 times slower than the fast one is as far from it on
 * the log axis whatever the units.
 *
 * The bandwidth: Silverman's rule, 0.9 min(sd, IQR / 1.34) n^(-1/5), on the
 * ln values.  The IQR term is what keeps a small slow mode apart: a 5% mode
 * barely moves the quartiles, so the bandwidth follows the width of the main
 * mode, not the spread of the mixture (which the sd alone would follow, and
 * oversmooth a 30 us / 400 us pair into one hump).  It is floored at 0.01
 * (1% of a duration): clocks do not resolve finer populations.  Then it
 * adapts (see estimate()): a bandwidth right for a narrow main mode splits
 * a diffuse slow population into lumps of noise, so sparse regions get
 * wider kernels.
 *
 * Durations on a coarse clock (perf script's microseconds) are multiples of
 * a quantum; their ln values would be spikes with holes between them at the
 * fast end.  Each is spread over its quantum (a deterministic golden-ratio
 * dither), which is what the clock's rounding hid.  The quantum is the gcd
 * of the durations, trusted up to 1 us (no clock lp reads is coarser): a
 * larger one means few distinct durations (all 5 us, or 30 us and 400 us),
 * not a clock, and spreading those would move their modes.
 *
 * What makes a valley significant (else its two modes are one):
 *   - its density is at most half the smaller neighbouring peak's (the
 *     dip of a mixture of two well-separated populations: two lognormals
 *     of width sigma dip that low when their medians are 3.35 sigma apart
 *     at equal shares, 4.6 sigma at 5%, 4.9 sigma at 2%: for sigma 0.3
 *     and a fast one at 30 us, a slow one at 82 us, 120 us and 130 us;
 *     closer, the slow population is a shoulder, and a cut there would
 *     split both);
 *   - both modes hold at least 0.5% of the durations and at least 20 of
 *     them: a handful of outliers is not a population;
 *   - the dip is beyond sampling noise: a kernel estimate's variance is
 *     about f R(K) / (n h), R(K) = 1 / (2 sqrt(pi)) for a Gaussian kernel
 *     (h the local bandwidth), and the peak must exceed the valley by 3
 *     standard errors of their difference.  Without this, lumps of a
 *     sparse population pass for modes (with a fixed bandwidth, a 2.5%
 *     population of sigma 0.5 beside a narrow main one showed 3 or 4 modes
 *     in 36 of 50 simulations, against 1 in 50 with it; the adaptive
 *     bandwidth now does most of that work: a 2% population of sigma 1.5
 *     100 times slower than the main one shows 3 modes in 3 of 50, 5
 *     without the test).
 * Insignificant valleys are removed shallowest first (highest valley/peak
 * ratio), merging their modes, until all that remain are significant: the
 * order in which a topographer merges hills by their prominence.
 */
#include "analysis/modes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

#define NOISE_Z 3.0
#define MAX_QUANTUM 1000	/* ns: perf script's microseconds */
#define MIN_BANDWIDTH 0.01
#define MIN_GRID 512
#define MAX_GRID (1 << 16)
#define KERNEL_SIGMAS 4.0	/* the kernel's truncation */
/* The adaptive kernel's width: the bandwidth times (g / pilot)^ALPHA,
 * clipped: at most 5 times the bandwidth in the thinnest tail (the cost of
 * the convolution grows with it), at least a fifth in the densest peak.
 * Abramson's law has ALPHA 1/2; with it, a 2% mode beside two broad ones
 * was smoothed away (its kernels 4 times wider), and 0.3 keeps it while
 * still smoothing a diffuse slow population into one mode (simulated:
 * lognormal mixtures of 3 us, 30 us and 400 us populations, 2-50%, sigma
 * 0.3-1.5, 300 to 1M durations, and unimodal lognormal, exponential,
 * Pareto and quantized ones, 30 to 100 seeds each). */
#define ALPHA 0.3
#define LAMBDA_MIN 0.2
#define LAMBDA_MAX 5.0

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static void swap_d(double *a, double *b)
{
	double t = *a;
	*a = *b;
	*b = t;
}

/* The k-th smallest of a[0..n) (0-based), reordering a: Hoare's select,
 * median of three, O(n) on average. */
static double select_k(double *a, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid] < a[lo])
			swap_d(&a[mid], &a[lo]);
		if (a[hi] < a[lo])
			swap_d(&a[hi], &a[lo]);
		if (a[hi] < a[mid])
			swap_d(&a[hi], &a[mid]);
		double pivot = a[mid];
		size_t i = lo, j = hi;
		while (i <= j) {
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i <= j) {
				swap_d(&a[i], &a[j]);
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return a[k];
	}
	return a[k];
}

/* The grid point's duration, rounded, within int64. */
static int64_t grid_ns(const struct lp_modes *m, size_t j)
{
	double v = exp(m->lo + (double)j * m->step);
	return v >= 9.2e18 ? INT64_MAX : (int64_t)llround(v);
}

/* The smallest grid index whose duration is >= d (the last one at most). */
static size_t cell_of(const struct lp_modes *m, const int64_t *gns, int64_t d)
{
	if (d <= gns[0])
		return 0;
	double pos = ceil((log((double)d) - m->lo) / m->step);
	size_t j = pos < 0 ? 0 : pos >= (double)m->ngrid ? m->ngrid - 1 : (size_t)pos;
	while (j > 0 && gns[j - 1] >= d)
		j--;
	while (j + 1 < m->ngrid && gns[j] < d)
		j++;
	return j;
}

/* The density's argmin over [a, b] (the first, on ties). */
static size_t argmin(const double *f, size_t a, size_t b)
{
	size_t best = a;
	for (size_t j = a + 1; j <= b; j++)
		if (f[j] < f[best])
			best = j;
	return best;
}

struct work {
	size_t *peak;		/* grid index of each mode's peak */
	size_t *valley;		/* grid index of each valley: nmodes - 1 */
	size_t n;		/* modes */
};

static size_t count_between(const struct lp_modes *m, const struct work *w, size_t i)
{
	size_t hi = i + 1 < w->n ? m->cum[w->valley[i]] : m->n;
	size_t lo = i ? m->cum[w->valley[i - 1]] : 0;
	return hi - lo;
}

/* Whether valley i (between modes i and i + 1) is significant; *ratio its
 * density over the smaller peak's. */
static bool significant(const struct lp_modes *m, const struct work *w, size_t i, double *ratio)
{
	const double *f = m->density;
	double fp = fmin(f[w->peak[i]], f[w->peak[i + 1]]), fv = f[w->valley[i]];
	size_t minc = (size_t)ceil(LP_MODES_MIN_MASS * (double)m->n);
	if (minc < LP_MODES_MIN_COUNT)
		minc = LP_MODES_MIN_COUNT;
	*ratio = fp > 0 ? fv / fp : 1;
	/* The variance of the estimate at x: f(x) R(K) / (n h lambda(x)). */
	size_t pp = f[w->peak[i]] < f[w->peak[i + 1]] ? w->peak[i] : w->peak[i + 1];
	double rk = 1 / (2 * sqrt(M_PI)), nh = (double)m->n * m->bandwidth;
	double se = sqrt(rk * (fp / (nh * m->lambda[pp]) + fv / (nh * m->lambda[w->valley[i]])));
	return *ratio <= LP_MODES_VALLEY_RATIO && fp - fv > NOISE_Z * se &&
	       count_between(m, w, i) >= minc && count_between(m, w, i + 1) >= minc;
}

static void merge_modes(const struct lp_modes *m, struct work *w)
{
	const double *f = m->density;
	for (;;) {
		size_t worst = SIZE_MAX;
		double worst_ratio = -1;
		for (size_t i = 0; i + 1 < w->n; i++) {
			double r;
			if (!significant(m, w, i, &r) && r > worst_ratio) {
				worst = i;
				worst_ratio = r;
			}
		}
		if (worst == SIZE_MAX)
			return;
		/* Modes worst and worst + 1 become one, at the higher peak. */
		size_t i = worst;
		if (f[w->peak[i + 1]] > f[w->peak[i]])
			w->peak[i] = w->peak[i + 1];
		memmove(&w->peak[i + 1], &w->peak[i + 2], (w->n - i - 2) * sizeof(*w->peak));
		memmove(&w->valley[i], &w->valley[i + 1], (w->n - i - 2) * sizeof(*w->valley));
		w->n--;
		/* The valleys beside the merged mode: the lowest point between
		 * its peak and its neighbours' (one of them was the one removed). */
		if (i > 0)
			w->valley[i - 1] = argmin(f, w->peak[i - 1], w->peak[i]);
		if (i + 1 < w->n)
			w->valley[i] = argmin(f, w->peak[i], w->peak[i + 1]);
	}
}

/* Adds count * N(t; j, width) to f over the grid, truncated, with width
 * in grid steps: the binned kernel of the durations of one cell. */
static void add_kernel(double *f, size_t g, size_t j, double count, double width)
{
	size_t k = (size_t)ceil(KERNEL_SIGMAS * width);
	size_t a = j > k ? j - k : 0, b = j + k < g ? j + k : g - 1;
	double norm = count / (width * sqrt(2 * M_PI));
	for (size_t t = a; t <= b; t++) {
		double z = ((double)t - (double)j) / width;
		f[t] += norm * exp(-0.5 * z * z);
	}
}

/* Linear binning onto the grid; a pilot estimate with the fixed bandwidth;
 * then an adaptive estimate (Abramson's): each cell's kernel widened by
 * (g / pilot)^ALPHA (g the pilot's geometric mean over the durations), so
 * sparse regions (tails, a diffuse slow population) are smoothed more and
 * dense ones less.  A fixed bandwidth small enough for a narrow main mode
 * splits a diffuse minority into noise lumps with dips between them. */
static void estimate(struct lp_modes *m, const double *u, size_t n)
{
	size_t g = m->ngrid;
	double *c = lp_calloc(g, sizeof(*c));
	for (size_t i = 0; i < n; i++) {
		double pos = (u[i] - m->lo) / m->step;
		size_t j = pos <= 0 ? 0 : (size_t)pos;
		if (j >= g - 1) {
			c[g - 1] += 1;
			continue;
		}
		double frac = pos - (double)j;
		c[j] += 1 - frac;
		c[j + 1] += frac;
	}
	double w = m->bandwidth / m->step, scale = 1 / ((double)n * m->step);
	double *pilot = lp_calloc(g, sizeof(*pilot));
	for (size_t j = 0; j < g; j++)
		if (c[j] > 0)
			add_kernel(pilot, g, j, c[j], w);
	double lg = 0;
	for (size_t j = 0; j < g; j++)
		if (c[j] > 0)
			lg += c[j] * log(pilot[j]);	/* > 0: the cell's own kernel */
	double geo = exp(lg / (double)n);
	m->lambda = lp_calloc(g, sizeof(*m->lambda));
	m->density = lp_calloc(g, sizeof(*m->density));
	for (size_t j = 0; j < g; j++) {
		double l = pilot[j] > 0 ? pow(geo / pilot[j], ALPHA) : LAMBDA_MAX;
		m->lambda[j] = l < LAMBDA_MIN ? LAMBDA_MIN : l > LAMBDA_MAX ? LAMBDA_MAX : l;
		if (c[j] > 0)
			add_kernel(m->density, g, j, c[j], w * m->lambda[j]);
	}
	/* per unit of ln(ns): the kernels summed over n, on a grid of step */
	for (size_t j = 0; j < g; j++)
		m->density[j] *= scale;
	free(pilot);
	free(c);
}

/* The durations' common quantum (1 when they have none worth using), and
 * their range. */
static uint64_t quantum_of(const int64_t *durs, size_t n, int64_t *dmin, int64_t *dmax)
{
	uint64_t q = 0;
	*dmin = INT64_MAX;
	*dmax = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t d = durs[i] > 0 ? durs[i] : 0;
		if (d < *dmin)
			*dmin = d;
		if (d > *dmax)
			*dmax = d;
		if (q != 1 && d)
			q = gcd64(q, (uint64_t)d);
	}
	return !q || q > MAX_QUANTUM ? 1 : q;
}

/* ln of each duration spread over its quantum (see above); the
 * golden-ratio sequence spreads equal durations evenly.  Sets the
 * bandwidth (Silverman's rule on the spread) and returns the logs, with
 * their range in *umin and *umax. */
static double *log_durations(struct lp_modes *m, const int64_t *durs, size_t n, uint64_t q,
			     double *umin, double *umax)
{
	double *u = lp_malloc(n * sizeof(*u));
	double mean = 0, m2 = 0;
	*umin = INFINITY;
	*umax = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		double phase = fmod((double)i * 0.6180339887498949, 1.0);
		double x = (double)(durs[i] > 0 ? durs[i] : 0) + (double)q * (phase - 0.5);
		u[i] = log(x < 0.5 ? 0.5 : x);
		*umin = fmin(*umin, u[i]);
		*umax = fmax(*umax, u[i]);
		double delta = u[i] - mean;	/* Welford */
		mean += delta / (double)(i + 1);
		m2 += delta * (u[i] - mean);
	}
	double sd = n > 1 ? sqrt(m2 / (double)(n - 1)) : 0;
	double *tmp = lp_malloc(n * sizeof(*tmp));
	memcpy(tmp, u, n * sizeof(*tmp));
	double q1 = select_k(tmp, n, (n - 1) / 4);
	double q3 = select_k(tmp, n, (3 * (n - 1)) / 4);
	free(tmp);
	double spread = fmin(sd, (q3 - q1) / 1.34);
	if (!(spread > 0))
		spread = sd;
	m->bandwidth = fmax(0.9 * spread * pow((double)n, -0.2), MIN_BANDWIDTH);
	return u;
}

/* Counts at or below each grid point's (rounded) duration: a mode's mass
 * is then exact for the cut at its valleys. */
static void count_cells(struct lp_modes *m, const int64_t *gns, const int64_t *durs, size_t n)
{
	m->cum = lp_calloc(m->ngrid, sizeof(*m->cum));
	for (size_t i = 0; i < n; i++)
		m->cum[cell_of(m, gns, durs[i] > 0 ? durs[i] : 0)]++;
	for (size_t j = 1; j < m->ngrid; j++)
		m->cum[j] += m->cum[j - 1];
}

/* Local maxima of the density, and the lowest point between each two,
 * merged where they are not separate modes. */
static struct work find_modes(struct lp_modes *m)
{
	const double *f = m->density;
	struct work w = { .peak = lp_malloc(m->ngrid * sizeof(size_t)),
			  .valley = lp_malloc(m->ngrid * sizeof(size_t)) };
	for (size_t j = 1; j + 1 < m->ngrid; j++)
		if (f[j] > f[j - 1] && f[j] >= f[j + 1])
			w.peak[w.n++] = j;
	if (!w.n)
		w.peak[w.n++] = argmin(f, 0, 0);	/* cannot happen: the tails are 0 */
	for (size_t i = 0; i + 1 < w.n; i++)
		w.valley[i] = argmin(f, w.peak[i], w.peak[i + 1]);
	merge_modes(m, &w);
	return w;
}

/* Each mode's peak, half-height width, count and mass; each valley's
 * place, depth and the count below it. */
static void describe_modes(struct lp_modes *m, const struct work *w, const int64_t *gns)
{
	const double *f = m->density;
	m->nmodes = w->n;
	m->modes = lp_calloc(w->n, sizeof(*m->modes));
	m->valleys = lp_calloc(w->n, sizeof(*m->valleys));
	for (size_t i = 0; i < w->n; i++) {
		struct lp_mode *md = &m->modes[i];
		size_t p = w->peak[i];
		size_t left = i ? w->valley[i - 1] : 0, right = i + 1 < w->n ? w->valley[i] : m->ngrid - 1;
		md->at_ns = gns[p];
		md->height = f[p];
		size_t a = p, b = p;
		while (a > left && f[a - 1] >= f[p] / 2)
			a--;
		while (b < right && f[b + 1] >= f[p] / 2)
			b++;
		md->lo_ns = gns[a];
		md->hi_ns = gns[b];
		md->count = count_between(m, w, i);
		md->mass = (double)md->count / (double)m->n;
		if (i + 1 < w->n) {
			struct lp_valley *v = &m->valleys[i];
			v->at_ns = gns[w->valley[i]];
			v->depth = fmin(f[p], f[w->peak[i + 1]]) > 0
				   ? f[w->valley[i]] / fmin(f[p], f[w->peak[i + 1]]) : 1;
			v->below = m->cum[w->valley[i]];
		}
	}
}

struct lp_modes *lp_modes__new(const int64_t *durs, size_t n)
{
	struct lp_modes *m = lp_calloc(1, sizeof(*m));
	m->n = n;
	if (!n)
		return m;

	int64_t dmin, dmax;
	double umin, umax;
	uint64_t q = quantum_of(durs, n, &dmin, &dmax);
	double *u = log_durations(m, durs, n, q, &umin, &umax);

	/* The grid: every duration, and the kernel's tails around them, at a
	 * step of at most a quarter bandwidth. */
	double h = m->bandwidth;
	m->lo = fmin(umin, log(dmin > 1 ? (double)dmin : 1.0)) - KERNEL_SIGMAS * h;
	double hi = fmax(umax, log(dmax > 1 ? (double)dmax : 1.0)) + KERNEL_SIGMAS * h;
	double want = ceil((hi - m->lo) / (h / 4)) + 1;
	m->ngrid = want < MIN_GRID ? MIN_GRID : want > MAX_GRID ? MAX_GRID : (size_t)want;
	m->step = (hi - m->lo) / (double)(m->ngrid - 1);
	estimate(m, u, n);
	free(u);

	int64_t *gns = lp_malloc(m->ngrid * sizeof(*gns));
	for (size_t j = 0; j < m->ngrid; j++)
		gns[j] = grid_ns(m, j);
	count_cells(m, gns, durs, n);
	struct work w = find_modes(m);
	describe_modes(m, &w, gns);
	free(w.peak);
	free(w.valley);
	free(gns);
	return m;
}

void lp_modes__free(struct lp_modes *m)
{
	if (!m)
		return;
	free(m->modes);
	free(m->valleys);
	free(m->density);
	free(m->lambda);
	free(m->cum);
	free(m);
}

double lp_modes__density(const struct lp_modes *m, double ns)
{
	if (!m->ngrid || !(ns > 0))
		return 0;
	double pos = (log(ns) - m->lo) / m->step;
	if (pos < 0 || pos > (double)(m->ngrid - 1))
		return 0;
	size_t j = (size_t)pos;
	if (j + 1 >= m->ngrid)
		return m->density[m->ngrid - 1];
	double frac = pos - (double)j;
	return m->density[j] * (1 - frac) + m->density[j + 1] * frac;
}

int lp_modes__auto_cut(const struct lp_modes *m)
{
	return m->nmodes >= 2 ? (int)m->nmodes - 2 : -1;
}

int lp_modes__inside(const struct lp_modes *m, double ns, int *valley)
{
	*valley = -1;
	if (!m->nmodes)
		return -1;
	double best = INFINITY, lns = log(ns > 1 ? ns : 1);
	for (size_t i = 0; i + 1 < m->nmodes; i++) {
		double dist = fabs(lns - log((double)(m->valleys[i].at_ns > 1 ? m->valleys[i].at_ns : 1)));
		if (dist < best) {
			best = dist;
			*valley = (int)i;
		}
	}
	size_t i = 0;
	while (i + 1 < m->nmodes && ns > (double)m->valleys[i].at_ns)
		i++;
	return lp_modes__density(m, ns) >= LP_MODES_INSIDE_RATIO * m->modes[i].height ? (int)i : -1;
}

/* --- the histogram --------------------------------------------------------- */

/* Edges per decade, in hundredths of the decade's first value. */
static const unsigned short ladder20[] = { 100, 112, 125, 140, 160, 180, 200, 225, 250, 280,
					   320, 360, 400, 450, 500, 560, 640, 720, 800, 900 };
static const unsigned short ladder10[] = { 100, 125, 160, 200, 250, 320, 400, 500, 640, 800 };
static const unsigned short ladder5[] = { 100, 160, 250, 400, 640 };
static const unsigned short ladder3[] = { 100, 200, 500 };
static const unsigned short ladder1[] = { 100 };
static const struct { const unsigned short *v; unsigned n; } ladders[] = {
	{ ladder20, 20 }, { ladder10, 10 }, { ladder5, 5 }, { ladder3, 3 }, { ladder1, 1 },
};

/* Every edge of a ladder, ascending, from 0 to past INT64_MAX's decade;
 * equal ones (below 100 ns, where hundredths round away) once. */
static size_t ladder_edges(unsigned which, int64_t *out)
{
	size_t n = 0;
	out[n++] = 0;
	for (int64_t decade = 1; ; decade *= 10) {
		for (unsigned i = 0; i < ladders[which].n; i++) {
			/* m / 100 * decade, exact: decade >= 100 divides by 100 */
			int64_t e = decade >= 100 ? ladders[which].v[i] * (decade / 100)
						  : ladders[which].v[i] * decade / 100;
			if (e > out[n - 1])
				out[n++] = e;
		}
		if (decade > INT64_MAX / 100)	/* 10^18: 9 * 10^18 still fits */
			break;
	}
	return n;
}

void lp_histogram__init(struct lp_histogram *h, const int64_t *durs, size_t n, size_t max_rows)
{
	int64_t all[20 * 19 + 2];
	int64_t dmin = INT64_MAX, dmax = 0;
	size_t first = 0, last = 0, ne = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t d = durs[i] > 0 ? durs[i] : 0;
		dmin = d < dmin ? d : dmin;
		dmax = d > dmax ? d : dmax;
	}
	unsigned which;
	memset(h, 0, sizeof(*h));
	for (which = 0; which < sizeof(ladders) / sizeof(ladders[0]); which++) {
		ne = ladder_edges(which, all);
		first = 0;
		while (first + 1 < ne && all[first + 1] <= dmin)
			first++;
		last = first;
		while (last < ne && all[last] <= dmax)
			last++;
		/* last == ne: beyond the top edge, up to INT64_MAX */
		if (last - first <= max_rows || which + 1 == sizeof(ladders) / sizeof(ladders[0]))
			break;
	}
	h->per_decade = ladders[which].n;
	h->nrows = last - first;
	h->edges = lp_malloc((h->nrows + 1) * sizeof(*h->edges));
	for (size_t i = 0; i <= h->nrows; i++)
		h->edges[i] = first + i < ne ? all[first + i] : INT64_MAX;
	h->counts = lp_calloc(h->nrows, sizeof(*h->counts));
	for (size_t i = 0; i < n; i++) {
		/* the last row whose lower edge is <= d */
		int64_t d = durs[i] > 0 ? durs[i] : 0;
		size_t lo = 0, hi = h->nrows - 1;
		while (lo < hi) {
			size_t mid = (lo + hi + 1) / 2;
			if (h->edges[mid] <= d)
				lo = mid;
			else
				hi = mid - 1;
		}
		h->counts[lo]++;
	}
}

void lp_histogram__free(struct lp_histogram *h)
{
	free(h->edges);
	free(h->counts);
	memset(h, 0, sizeof(*h));
}

/* latency.c - span durations per probe (latency.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/latency.h"
#include "analysis/selfcost.h"
#include "base/hashmap.h"
#include "base/util.h"

struct probe {
	char *name;
	size_t len;
	uint64_t hash;
	int64_t *d;		/* durations, ns; sorted before output */
	size_t n, cap;
	uint64_t unfinished;
};

struct lp_latency {
	struct lp_hashmap probes;	/* hash of the name -> struct probe */
	struct probe *last;	/* spans of one probe tend to come in runs */
	uint64_t unfinished;
	bool raw;
};

struct lp_latency *lp_latency__new(bool raw)
{
	struct lp_latency *l = lp_calloc(1, sizeof(*l));
	l->raw = raw;
	lp_hashmap__init(&l->probes);
	return l;
}

void lp_latency__free(struct lp_latency *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->probes.cap; i++) {
		struct probe *p = l->probes.values[i];
		if (!l->probes.keys[i])
			continue;
		free(p->name);
		free(p->d);
		free(p);
	}
	lp_hashmap__fini(&l->probes);
	free(l);
}

static struct probe *probe_get(struct lp_latency *l, const char *name)
{
	size_t len = strlen(name);
	uint64_t h;

	if (l->last && l->last->len == len && memcmp(l->last->name, name, len) == 0)
		return l->last;
	h = lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, name, len));
	struct probe *p;
	for (size_t pos = 0; (p = lp_hashmap__next(&l->probes, h, &pos));)
		if (p->len == len && memcmp(p->name, name, len) == 0)
			return l->last = p;
	p = lp_calloc(1, sizeof(*p));
	p->name = lp_strndup(name, len);
	p->len = len;
	lp_hashmap__add(&l->probes, h, p);
	return l->last = p;
}

int lp_latency__add(struct lp_latency *l, const struct lp_span *span, const char **why)
{
	struct probe *p;

	if (span->start_ns == LP_TIME_NONE) {
		*why = "span without a start time";
		return -1;
	}
	if (span->end_ns != LP_TIME_NONE && span->end_ns < span->start_ns) {
		*why = "span ends before it starts";
		return -1;
	}
	p = probe_get(l, span->probe ? span->probe : "");
	if (span->end_ns == LP_TIME_NONE) {
		p->unfinished++;
		l->unfinished++;
		return 1;
	}
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 64;
		p->d = lp_reallocarray(p->d, p->cap, sizeof(*p->d));
	}
	int64_t d = span->end_ns - span->start_ns;
	double lp_ns = 0;
	if (!l->raw && !lp_span__lp_ns(span, &lp_ns)) {
		*why = "bad lp_ns";
		return -1;
	}
	p->d[p->n++] = lp_less_cost(d, lp_ns);
	return 0;
}

uint64_t lp_latency__unfinished(const struct lp_latency *l)
{
	return l->unfinished;
}

int64_t lp_latency__quantile(const int64_t *sorted, size_t n, unsigned pct)
{
	/* rank = ceil(pct * n / 100), at least 1; n * pct fits: n < 2^57. */
	size_t rank = (n * pct + 99) / 100;
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

static int cmp_probe(const void *a, const void *b)
{
	const struct probe *x = *(struct probe *const *)a, *y = *(struct probe *const *)b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->name, y->name, n);
	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* The probes by name, each with its durations sorted. */
static struct probe **sorted_probes(struct lp_latency *l)
{
	struct probe **v = lp_calloc(l->probes.count + 1, sizeof(*v));
	size_t k = 0;

	for (size_t i = 0; i < l->probes.cap; i++)
		if (l->probes.keys[i])
			v[k++] = l->probes.values[i];
	if (k > 1)	/* qsort's array may not be NULL, even empty (UBSan) */
		qsort(v, k, sizeof(*v), cmp_probe);
	for (size_t i = 0; i < k; i++)
		if (v[i]->n > 1)
			qsort(v[i]->d, v[i]->n, sizeof(*v[i]->d), lp_cmp_i64);
	return v;
}

/* Probe names may hold any byte but a tab or newline would break a row:
 * write them escaped as the stream escapes a field. */
static void put_name(FILE *out, const struct probe *p)
{
	char *buf = lp_malloc(4 * p->len + 1);
	size_t n = lp_escape(buf, p->name, p->len);
	fwrite(buf, 1, n, out);
	free(buf);
}

static void note_unfinished(const struct probe *p)
{
	if (p->unfinished)
		lp_error("%s: %" PRIu64 " unfinished span%s not counted", p->name,
			 p->unfinished, p->unfinished == 1 ? "" : "s");
}

int lp_latency__write_table(struct lp_latency *l, FILE *out)
{
	struct probe **v = sorted_probes(l);

	fputs("probe\tcount\tmin_ns\tp50_ns\tp90_ns\tp99_ns\tmax_ns\n", out);
	for (size_t i = 0; v[i]; i++) {
		struct probe *p = v[i];
		put_name(out, p);
		if (p->n == 0) {
			fputs("\t0\t-\t-\t-\t-\t-\n", out);
		} else {
			fprintf(out, "\t%zu\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64
				"\t%" PRId64 "\n", p->n, p->d[0],
				lp_latency__quantile(p->d, p->n, 50),
				lp_latency__quantile(p->d, p->n, 90),
				lp_latency__quantile(p->d, p->n, 99), p->d[p->n - 1]);
		}
		note_unfinished(p);
	}
	free(v);
	return ferror(out) ? -1 : 0;
}

/* log2 slot of a value: 0 holds 0 and 1, slot i >= 1 holds [2^i, 2^(i+1)). */
static int slot_of(uint64_t v)
{
	return v < 2 ? 0 : 63 - __builtin_clzll(v);
}

static void put_bar(FILE *out, uint64_t count, uint64_t most, int width)
{
	int stars = most ? (int)(count * (uint64_t)width / most) : 0;

	putc_unlocked('|', out);
	for (int i = 0; i < width; i++)
		putc_unlocked(i < stars ? '*' : ' ', out);
	fputs("|\n", out);
}

static void write_histogram(FILE *out, const struct probe *p)
{
	static const struct { const char *name; int64_t div; } units[] = {
		{ "nsecs", 1 }, { "usecs", 1000 }, { "msecs", 1000000 },
	};
	uint64_t slots[64] = { 0 }, most = 0, total = 0;
	int lo = 63, hi = 0, u;
	int64_t max = p->n ? p->d[p->n - 1] : 0;

	/* The unit keeps the histogram short: nsecs below 100 us, usecs below
	 * 100 ms, msecs above. */
	u = max < 100000 ? 0 : max < 100000000 ? 1 : 2;
	for (size_t i = 0; i < p->n; i++) {
		uint64_t v = (uint64_t)(p->d[i] / units[u].div);
		int s = slot_of(v);
		slots[s]++;
		total += v;
		if (s < lo)
			lo = s;
		if (s > hi)
			hi = s;
	}
	fprintf(out, "probe = ");
	put_name(out, p);
	putc_unlocked('\n', out);
	if (p->n == 0) {
		fprintf(out, "no finished span (%" PRIu64 " unfinished)\n", p->unfinished);
		return;
	}
	for (int s = lo; s <= hi; s++)
		if (slots[s] > most)
			most = slots[s];
	fprintf(out, "%5s%-19s : count    distribution\n", "", units[u].name);
	for (int s = lo; s <= hi; s++) {
		uint64_t low = s == 0 ? 0 : 1ULL << s;
		uint64_t high = (1ULL << s << 1) - 1;
		fprintf(out, "%10" PRIu64 " -> %-10" PRIu64 " : %-8" PRIu64 " ", low, high, slots[s]);
		put_bar(out, slots[s], most, 40);
	}
	fprintf(out, "count = %zu, avg = %" PRIu64 " %s, total = %" PRIu64 " %s, "
		"p50 = %" PRId64 " ns, p99 = %" PRId64 " ns, max = %" PRId64 " ns",
		p->n, total / p->n, units[u].name, total, units[u].name,
		lp_latency__quantile(p->d, p->n, 50), lp_latency__quantile(p->d, p->n, 99), max);
	if (p->unfinished)
		fprintf(out, ", unfinished = %" PRIu64, p->unfinished);
	putc_unlocked('\n', out);
}

int lp_latency__write_histograms(struct lp_latency *l, FILE *out)
{
	struct probe **v = sorted_probes(l);

	for (size_t i = 0; v[i]; i++) {
		if (i)
			putc_unlocked('\n', out);
		write_histogram(out, v[i]);
	}
	free(v);
	return ferror(out) ? -1 : 0;
}

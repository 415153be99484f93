/* heatmap.c - flamescope's sub-second offset heatmap.
 *
 * The grid: column c holds the samples whose time t has
 *   c = floor((t - origin) / 1 s),
 * row r those whose offset in that second, o = (t - origin) mod 1 s, has
 *   r = floor(o * rows / 1 s).
 * origin is the first sample's time; a sample that arrives later but is
 * earlier (rings of several CPUs drain out of order) moves origin back by
 * whole seconds, prepending columns, so the grid's phase never changes and
 * no count has to be re-binned.  origin is then the first sample's time
 * less a whole number of seconds, and column 0 holds the earliest sample.
 *
 * In integer nanoseconds, row r starts at offset ceil(r * 1e9 / rows): the
 * smallest o with floor(o * rows / 1e9) = r.  A cell's time range is
 * therefore exact, and is written as lp-split --time @FROM-@TO: absolute
 * times, because lp-split's relative times count from the first time it
 * reads (a span's start, an unfiltered sample, the earliest sample of an
 * exact-percentile pass...), which need not be this heatmap's origin.
 *
 * Memory: rows 64-bit counters for each second between the earliest and
 * the latest sample, at most a day of them (86400 columns); samples
 * further apart are refused rather than allocated for.
 */
#include "output/heatmap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "output/flamegraph.h"
#include "base/util.h"

#define NS_PER_SEC 1000000000LL
#define MAX_COLUMNS 86400		/* a day of seconds */

struct lp_heatmap {
	int rows;
	bool started;		/* a sample has set origin */
	int64_t origin;		/* column 0's first nanosecond */
	int64_t tmin, tmax;	/* the samples' extremes, for messages */
	/* Column c's counters are cells[(front + c) * rows + r]: the room before
	 * column 0 lets earlier samples prepend columns without moving the
	 * others each time. */
	uint64_t *cells;
	size_t front, ncols, cap;	/* columns: unused before, used, allocated */
	char why[192];
};

struct lp_heatmap *lp_heatmap__new(int rows)
{
	if (rows < 1 || rows > 1000) {
		errno = EINVAL;
		return NULL;
	}
	struct lp_heatmap *h = lp_calloc(1, sizeof(*h));
	h->rows = rows;
	return h;
}

void lp_heatmap__free(struct lp_heatmap *h)
{
	if (!h)
		return;
	free(h->cells);
	free(h);
}

/* Room for ncols columns in all, `prepend` of them new before column 0. */
static void grow(struct lp_heatmap *h, size_t prepend, size_t ncols)
{
	size_t rows = (size_t)h->rows;
	if (prepend <= h->front && h->front - prepend + ncols <= h->cap) {
		h->front -= prepend;
		h->ncols = ncols;
		return;
	}
	/* Double, with the slack on the side that grew, never past a day. */
	size_t old = h->ncols, slack = old < MAX_COLUMNS - ncols ? old : MAX_COLUMNS - ncols;
	size_t front = prepend ? prepend + slack : 0;
	size_t cap = front - prepend + ncols + (prepend ? 0 : slack);
	uint64_t *cells = lp_calloc(cap * rows, sizeof(*cells));
	if (old)
		memcpy(cells + (front * rows), h->cells + h->front * rows,
		       old * rows * sizeof(*cells));
	free(h->cells);
	h->cells = cells;
	h->cap = cap;
	h->front = front - prepend;
	h->ncols = ncols;
}

int lp_heatmap__add(struct lp_heatmap *h, const struct lp_sample *s, const char **why)
{
	int64_t t = s->time_ns;
	if (t == LP_TIME_NONE) {
		*why = "a heatmap needs timestamps (folded input and perf script without times have none)";
		return -1;
	}
	if (t < 0) {	/* the reader refuses them (formats/lp-stream.md) */
		snprintf(h->why, sizeof(h->why), "sample time %" PRId64 " ns is negative", t);
		*why = h->why;
		return -1;
	}
	if (!h->started) {
		h->started = true;
		h->origin = h->tmin = h->tmax = t;
		grow(h, 0, 1);
	}
	/* t and every earlier time are 0 to INT64_MAX, origin at most a second
	 * below the earliest: the differences cannot overflow. */
	size_t prepend = 0, col;
	if (t < h->origin) {
		prepend = (size_t)((h->origin - t - 1) / NS_PER_SEC + 1);	/* rounded up */
		col = 0;
	} else {
		col = (size_t)((t - h->origin) / NS_PER_SEC);
	}
	size_t ncols = prepend ? h->ncols + prepend : col + 1 > h->ncols ? col + 1 : h->ncols;
	if (ncols > MAX_COLUMNS) {
		snprintf(h->why, sizeof(h->why),
			 "sample at %" PRId64 " ns would stretch the heatmap past a day, its limit "
			 "(the samples so far: %" PRId64 " to %" PRId64 " ns)", t, h->tmin, h->tmax);
		*why = h->why;
		return -1;
	}
	if (ncols != h->ncols)
		grow(h, prepend, ncols);
	h->origin -= (int64_t)prepend * NS_PER_SEC;
	int64_t d = t - h->origin - (int64_t)col * NS_PER_SEC;
	size_t row = (size_t)(d * h->rows / NS_PER_SEC);
	h->cells[(h->front + col) * (size_t)h->rows + row]++;
	if (t < h->tmin)
		h->tmin = t;
	if (t > h->tmax)
		h->tmax = t;
	return 0;
}

/* --- cells ------------------------------------------------------------ */


/* Row r's first nanosecond in its second: the least o with
 * floor(o * rows / 1e9) == r. */
static int64_t row_start_ns(const struct lp_heatmap *h, int r)
{
	return ((int64_t)r * NS_PER_SEC + h->rows - 1) / h->rows;
}

/* Row r's start in milliseconds, exact when it is a whole number. */
static void format_ms(char *buf, size_t size, const struct lp_heatmap *h, int r)
{
	if ((int64_t)r * 1000 % h->rows == 0)
		snprintf(buf, size, "%" PRId64, (int64_t)r * 1000 / h->rows);
	else
		snprintf(buf, size, "%.6g", r * 1000.0 / h->rows);
}

/* The cell's [FROM, TO) as lp-split --time takes it; "-" when the range
 * starts before time 0, which its @NS cannot name. */
static void format_range(char *buf, size_t size, const struct lp_heatmap *h, size_t col, int r)
{
	int64_t sec = h->origin + (int64_t)col * NS_PER_SEC;
	int64_t from = sec + row_start_ns(h, r), to = lp_add_sat(sec, row_start_ns(h, r + 1));
	if (from < 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "@%" PRId64 "-@%" PRId64, from, to);
}

/* A non-empty cell as both writers show it. */
struct cell {
	size_t col;
	int row;
	uint64_t n;
	char from_ms[32], to_ms[32];	/* its offsets in the second */
	char range[64];			/* for lp-split --time */
};

/* Steps c to the next non-empty cell, by second then offset; false after
 * the last.  Start from { .row = -1 }. */
static bool next_cell(const struct lp_heatmap *h, struct cell *c)
{
	for (; c->col < h->ncols; c->col++, c->row = -1)
		while (++c->row < h->rows) {
			c->n = h->cells[(h->front + c->col) * (size_t)h->rows + (size_t)c->row];
			if (!c->n)
				continue;
			format_ms(c->from_ms, sizeof(c->from_ms), h, c->row);
			format_ms(c->to_ms, sizeof(c->to_ms), h, c->row + 1);
			format_range(c->range, sizeof(c->range), h, c->col, c->row);
			return true;
		}
	return false;
}

static int finish(FILE *out)
{
	if (ferror(out) || fflush(out) == EOF) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}

int lp_heatmap__write_tsv(struct lp_heatmap *h, FILE *out)
{
	fputs("second\toffset_ms\tsamples\ttime\n", out);
	for (struct cell c = { .row = -1 }; next_cell(h, &c);)
		fprintf(out, "%zu\t%s\t%" PRIu64 "\t%s\n", c.col, c.from_ms, c.n, c.range);
	return finish(out);
}

/* --- SVG -------------------------------------------------------------- */

/* Layout in pixels: margins for the title, the axes and their labels. */
#define FONT_SIZE 12
#define LEFT 70
#define RIGHT 20
#define TOP 40
#define BOTTOM 60
#define MIN_WIDTH 480

/* White for nothing, through orange to dark red for the fullest cell;
 * the faintest non-empty cell still shows against the white. */
static void shade(uint64_t n, uint64_t max, char *buf, size_t size)
{
	static const double stops[3][3] = { { 255, 245, 225 }, { 250, 140, 0 }, { 130, 0, 0 } };
	double f = (double)n / (double)max, rgb[3];
	int i = f < 0.5 ? 0 : 1;
	double u = f < 0.5 ? f / 0.5 : (f - 0.5) / 0.5;
	for (int k = 0; k < 3; k++)
		rgb[k] = stops[i][k] + (stops[i + 1][k] - stops[i][k]) * u;
	snprintf(buf, size, "#%02x%02x%02x", (int)(rgb[0] + 0.5), (int)(rgb[1] + 0.5),
		 (int)(rgb[2] + 0.5));
}

static void put_head(FILE *out, int width, int height, const char *title)
{
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<!-- drawn by lp-collapse (format heatmap): samples by second (x) and offset "
		"within the second (y); hover a cell for its count and lp-split range -->\n"
		"<style type=\"text/css\">\n"
		"text { font-family: Verdana, sans-serif; font-size: %dpx; fill: rgb(0,0,0); }\n"
		"#title { text-anchor: middle; font-size: %dpx; }\n"
		".axis { text-anchor: middle; }\n"
		".ylabel { text-anchor: end; }\n"
		"#cells rect:hover { stroke: rgb(0,0,0); stroke-width: 1; }\n"
		"</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"rgb(255,255,255)\"/>\n"
		"<text id=\"title\" x=\"%d\" y=\"%d\">",
		width, height, width, height, FONT_SIZE, FONT_SIZE + 5, width, height,
		width / 2, FONT_SIZE * 2);
	lp_svg_put_text(out, title ? title : "Heatmap");
	fputs("</text>\n", out);
}

/* Seconds between labels on the x axis: 1, 2, 5, 10, 20, 50... so that
 * labels stand at least 40 px apart. */
static size_t label_step(int cw)
{
	for (size_t step = 1;; step *= 10)
		for (int k = 0; k < 3; k++) {
			static const size_t mult[3] = { 1, 2, 5 };
			if ((size_t)cw * step * mult[k] >= 40)
				return step * mult[k];
		}
}

int lp_heatmap__write_svg(struct lp_heatmap *h, FILE *out, const char *title)
{
	uint64_t max = 0, total = 0;
	for (size_t i = h->front * (size_t)h->rows; i < (h->front + h->ncols) * (size_t)h->rows; i++) {
		total += h->cells[i];
		if (h->cells[i] > max)
			max = h->cells[i];
	}
	if (!total) {
		put_head(out, MIN_WIDTH, TOP + 3 * FONT_SIZE, title);
		fprintf(out, "<text id=\"nosamples\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">"
			"no samples</text>\n</svg>\n", MIN_WIDTH / 2, TOP + FONT_SIZE);
		return finish(out);
	}
	/* Integer cell sizes: about 1000 x 500 px of grid, within limits that
	 * keep a cell visible and a short recording from looking bloated. */
	int cw = (int)(1000 / h->ncols), ch = 500 / h->rows;
	cw = cw < 2 ? 2 : cw > 20 ? 20 : cw;
	ch = ch < 1 ? 1 : ch > 20 ? 20 : ch;
	int gw = (int)h->ncols * cw, gh = h->rows * ch;
	int width = LEFT + gw + RIGHT, height = TOP + gh + BOTTOM;
	if (width < MIN_WIDTH)
		width = MIN_WIDTH;
	put_head(out, width, height, title);

	/* the grid's frame, then the axes: offset 0 at the bottom, so time runs
	 * up each column, then on to the next, as in flamescope */
	fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
		"stroke=\"rgb(200,200,200)\"/>\n", LEFT, TOP, gw, gh);
	for (int ms = 0; ms <= 1000; ms += 200)
		fprintf(out, "<text class=\"ylabel\" x=\"%d\" y=\"%d\">%d</text>\n", LEFT - 6,
			TOP + gh - ms * gh / 1000 + FONT_SIZE / 3, ms);
	fprintf(out, "<text class=\"axis\" transform=\"translate(%d,%d) rotate(-90)\">"
		"offset (ms)</text>\n", FONT_SIZE + 4, TOP + gh / 2);
	size_t step = label_step(cw);
	for (size_t c = 0; c <= h->ncols; c += step)
		fprintf(out, "<text class=\"axis\" x=\"%d\" y=\"%d\">%zu</text>\n",
			LEFT + (int)c * cw, TOP + gh + FONT_SIZE + 4, c);
	fprintf(out, "<text class=\"axis\" x=\"%d\" y=\"%d\">seconds</text>\n",
		LEFT + gw / 2, TOP + gh + 2 * FONT_SIZE + 8);
	char cell_ms[32], fill[16];
	format_ms(cell_ms, sizeof(cell_ms), h, 1);
	fprintf(out, "<text x=\"%d\" y=\"%d\">%" PRIu64 " samples in %zu s, %s ms cells; "
		"the darkest holds %" PRIu64 "</text>\n", LEFT, height - FONT_SIZE / 2, total,
		h->ncols, cell_ms, max);

	fputs("<g id=\"cells\">\n", out);
	for (struct cell c = { .row = -1 }; next_cell(h, &c);) {
		shade(c.n, max, fill, sizeof(fill));
		fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\">"
			"<title>second %zu, offset %s\u2013%s ms: %" PRIu64 " sample%s; "
			"lp-split --time %s</title></rect>\n",
			LEFT + (int)c.col * cw, TOP + (h->rows - 1 - c.row) * ch, cw, ch, fill,
			c.col, c.from_ms, c.to_ms, c.n, c.n == 1 ? "" : "s", c.range);
	}
	fputs("</g>\n</svg>\n", out);
	return finish(out);
}

/* util.c - diagnostics, allocation, number parsing and output checks shared
 * by every program. */
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

const char *lp_progname = "lp";

void lp_init(int argc, char **argv)
{
	if (argc > 0 && argv[0] && argv[0][0]) {
		const char *slash = strrchr(argv[0], '/');
		lp_progname = slash ? slash + 1 : argv[0];
	}
}

/* One write(2) per diagnostic, so lines from programs sharing a terminal do
 * not interleave; control characters from untrusted strings become '?'. */
static void vreport(const char *fmt, va_list ap, int errnum)
{
	char msg[4096];
	int n = snprintf(msg, sizeof(msg), "%s: ", lp_progname);
	if (n < 0)
		return;
	int m = vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
	if (m > 0)
		n = (size_t)(n + m) >= sizeof(msg) ? (int)sizeof(msg) - 1 : n + m;
	for (int i = 0; i < n; i++)
		if ((unsigned char)msg[i] < 0x20 || msg[i] == 0x7f)
			msg[i] = '?';
	if (errnum)
		n += snprintf(msg + n, sizeof(msg) - n, ": %s", strerror(errnum));
	if ((size_t)n >= sizeof(msg) - 1)
		n = sizeof(msg) - 2;
	msg[n++] = '\n';
	ssize_t unused = write(STDERR_FILENO, msg, n);
	(void)unused;
}

void lp_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(fmt, ap, 0);
	va_end(ap);
}

void lp_error_errno(const char *fmt, ...)
{
	int errnum = errno;
	va_list ap;
	va_start(ap, fmt);
	vreport(fmt, ap, errnum);
	va_end(ap);
}

void lp_die(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(fmt, ap, 0);
	va_end(ap);
	exit(status);
}

void lp_print_version(void)
{
	printf("%s (lp) %s\n", lp_progname, LP_VERSION);
	lp_exit_stdout();
}

void lp_exit_stdout(void)
{
	exit(lp_close_output(stdout, "stdout") ? 1 : 0);
}

static void *check_alloc(void *p)
{
	if (!p) {
		lp_error("out of memory");
		exit(1);
	}
	return p;
}

void *lp_malloc(size_t size) { return check_alloc(malloc(size ? size : 1)); }
void *lp_calloc(size_t n, size_t size) { return check_alloc(calloc(n ? n : 1, size ? size : 1)); }
void *lp_realloc(void *p, size_t size) { return check_alloc(realloc(p, size ? size : 1)); }
void *lp_reallocarray(void *p, size_t n, size_t size)
{
	return check_alloc(reallocarray(p, n ? n : 1, size ? size : 1));
}
char *lp_strdup(const char *s) { return check_alloc(strdup(s)); }
char *lp_strndup(const char *s, size_t n) { return check_alloc(strndup(s, n)); }

void lp_grow(char **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return;
	size_t n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	*buf = lp_realloc(*buf, n);
	*cap = n;
}

/* The length of the decimal number at the start of s: an optional '-',
 * digits and, when real, a fraction and an exponent; 0 when there is none.
 * What strtol(s, 0) and strtod accept beyond this (octal "010", hex, "inf",
 * "nan", leading spaces, '+') is refused: on a command line "010" is ten. */
static size_t decimal_span(const char *s, bool real)
{
	size_t i = s[0] == '-', digits = strspn(s + i, "0123456789");

	i += digits;
	if (real && s[i] == '.') {
		size_t f = strspn(s + i + 1, "0123456789");
		digits += f;
		i += 1 + f;
	}
	if (!digits)
		return 0;
	if (real && (s[i] == 'e' || s[i] == 'E')) {
		size_t j = i + 1 + (s[i + 1] == '+' || s[i + 1] == '-');
		size_t e = strspn(s + j, "0123456789");
		if (e)
			i = j + e;
	}
	return i;
}

static const char *not_decimal(const char *s)
{
	return s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? "not a decimal number"
							  : "not a number";
}

int lp_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out, const char **why)
{
	size_t n = decimal_span(s, false);
	if (!n || s[n]) {
		*why = not_decimal(s);
		return -1;
	}
	errno = 0;
	long long v = strtoll(s, NULL, 10);
	if ((errno == ERANGE && v == LLONG_MIN) || v < min) {
		*why = "too small";
		return -1;
	}
	if ((errno == ERANGE && v == LLONG_MAX) || v > max) {
		*why = "too large";
		return -1;
	}
	*out = v;
	return 0;
}

int lp_parse_u64(const char *s, uint64_t max, uint64_t *out, const char **why)
{
	size_t n = decimal_span(s, false);
	if (!n || s[n]) {
		*why = not_decimal(s);
		return -1;
	}
	if (s[0] == '-') {
		*why = "too small";
		return -1;
	}
	errno = 0;
	unsigned long long v = strtoull(s, NULL, 10);
	if (errno == ERANGE || v > max) {
		*why = "too large";
		return -1;
	}
	*out = v;
	return 0;
}

int lp_parse_addr(const char *s, uint64_t max, uint64_t *out, const char **why)
{
	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return lp_parse_u64(s, max, out, why);
	size_t n = strspn(s + 2, "0123456789abcdefABCDEF");
	if (!n || s[2 + n]) {
		*why = "not a hex number";
		return -1;
	}
	errno = 0;
	unsigned long long v = strtoull(s + 2, NULL, 16);
	if (errno == ERANGE || v > max) {
		*why = "too large";
		return -1;
	}
	*out = v;
	return 0;
}

int lp_parse_double(const char *s, double *out, const char **why)
{
	size_t n = decimal_span(s, true);
	if (!n || s[n]) {
		*why = not_decimal(s);
		return -1;
	}
	/* An underflow (1e-999) is as good as its result, 0 or a denormal. */
	double v = strtod(s, NULL);
	if (isinf(v)) {
		*why = "out of range";
		return -1;
	}
	*out = v;
	return 0;
}

int lp_parse_duration(const char *s, int64_t *ns, const char **why)
{
	static const struct { const char *suffix; int64_t scale; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
		{ "m", 60000000000 }, { "h", 3600000000000 },
		{ "", 1000000000 },	/* a bare number is seconds, as sleep(1)'s */
	};
	size_t n = decimal_span(s, true);
	if (!n) {
		*why = "not a duration (e.g. 250us, 3ms, 1.5s, 2m; a bare number is seconds)";
		return -1;
	}
	const char *unit = s + n;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(unit, units[i].suffix))
			continue;
		if (s[0] == '-') {
			*why = "negative";
			return -1;
		}
		int64_t scale = units[i].scale;
		if (strspn(s, "0123456789") == n) {
			/* Whole numbers exactly, beyond a double's 2^53. */
			errno = 0;
			unsigned long long v = strtoull(s, NULL, 10);
			if (errno == ERANGE || v > (unsigned long long)(INT64_MAX / scale)) {
				*why = "too large";
				return -1;
			}
			*ns = (int64_t)v * scale;
			return 0;
		}
		double t = strtod(s, NULL) * (double)scale;
		if (!(t < 9.2e18)) {
			*why = "too large";
			return -1;
		}
		*ns = (int64_t)llround(t);
		return 0;
	}
	*why = "unknown unit (ns, us, ms, s, m, h; a bare number is seconds)";
	return -1;
}

void lp_option_fail(const char *name, const char *arg, const char *why)
{
	lp_error("--%s '%s': %s", name, arg, why);
	exit(2);
}

int64_t lp_option_i64(const char *name, const char *arg, int64_t min, int64_t max)
{
	int64_t v;
	const char *why;
	char msg[64];

	if (lp_parse_i64(arg, INT64_MIN, INT64_MAX, &v, &why) < 0)
		lp_option_fail(name, arg, why);
	if (v < min || v > max) {
		snprintf(msg, sizeof(msg), "must be at %s %lld", v < min ? "least" : "most",
			 (long long)(v < min ? min : max));
		lp_option_fail(name, arg, msg);
	}
	return v;
}

uint64_t lp_option_u64(const char *name, const char *arg, uint64_t min, uint64_t max)
{
	uint64_t v;
	const char *why;
	char msg[64];

	if (lp_parse_u64(arg, UINT64_MAX, &v, &why) < 0)
		lp_option_fail(name, arg, why);
	if (v < min || v > max) {
		snprintf(msg, sizeof(msg), "must be at %s %llu", v < min ? "least" : "most",
			 (unsigned long long)(v < min ? min : max));
		lp_option_fail(name, arg, msg);
	}
	return v;
}

int64_t lp_option_duration(const char *name, const char *arg, bool positive)
{
	int64_t ns;
	const char *why;

	if (lp_parse_duration(arg, &ns, &why) < 0)
		lp_option_fail(name, arg, why);
	if (positive && ns <= 0)
		lp_option_fail(name, arg, "must be positive");
	return ns;
}

/* --- outputs flushed when an input goes idle -------------------------- */

/* Only filters' outputs (lp_flush_outputs_when_idle was called, by
 * lp_stop__read_through_first_sigint): they close them with
 * lp_close_output, which takes them off the list. */
static bool flush_when_idle;

void lp_flush_outputs_when_idle(void)
{
	flush_when_idle = true;
}
static pthread_mutex_t outputs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct open_output {
	FILE *f;
	char *name;
} *outputs;
static size_t noutputs;

FILE *lp_open_output(const char *path)
{
	bool std = !path || !strcmp(path, "-");
	FILE *f = std ? stdout : fopen(path, "w");
	if (!f) {
		lp_error_errno("%s", path);
		exit(1);
	}
	if (flush_when_idle) {
		pthread_mutex_lock(&outputs_lock);
		outputs = lp_reallocarray(outputs, noutputs + 1, sizeof(*outputs));
		outputs[noutputs].f = f;
		outputs[noutputs++].name = lp_strdup(std ? "stdout" : path);
		pthread_mutex_unlock(&outputs_lock);
	}
	return f;
}

static void forget_output(FILE *f)
{
	pthread_mutex_lock(&outputs_lock);
	for (size_t i = 0; i < noutputs; i++)
		if (outputs[i].f == f) {
			free(outputs[i].name);
			outputs[i] = outputs[--noutputs];
			break;
		}
	if (!noutputs) {
		free(outputs);
		outputs = NULL;
	}
	pthread_mutex_unlock(&outputs_lock);
}

void lp_flush_outputs(void)
{
	char *failed = NULL;
	int err = 0;

	pthread_mutex_lock(&outputs_lock);
	for (size_t i = 0; i < noutputs && !failed; i++)
		if (fflush(outputs[i].f) == EOF) {
			err = errno;
			failed = lp_strdup(outputs[i].name);
		}
	pthread_mutex_unlock(&outputs_lock);
	if (failed) {
		errno = err;
		lp_write_failed(failed);
	}
}

void lp_write_failed(const char *name)
{
	if (errno == EPIPE) {
		signal(SIGPIPE, SIG_DFL);
		raise(SIGPIPE);
	}
	lp_error_errno("write error on %s", name);
	exit(1);
}

int lp_close_output(FILE *f, const char *name)
{
	forget_output(f);
	int failed = fflush(f) != 0 || ferror(f);
	int err = errno;
	if (f != stdout && fclose(f) != 0 && !failed) {
		failed = 1;
		err = errno;
	}
	if (!failed)
		return 0;
	errno = err;
	if (err == EPIPE)
		lp_write_failed(name);
	lp_error_errno("write error on %s", name);
	return -1;
}

/* Perl prints an integer-valued sum as an integer and anything else with
 * "%.15g"; FlameGraph's tools print counts that way, and the corpus pins it. */
int lp_format_number(char *buf, size_t size, double v)
{
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		return snprintf(buf, size, "%.0f", v == 0 ? 0.0 : v);
	return snprintf(buf, size, "%.15g", v);
}

uint64_t lp_hash_number_or_text(uint64_t h, const char *v, size_t n)
{
	char buf[32];
	const char *why;
	uint64_t x;

	if (n && n < sizeof(buf)) {
		memcpy(buf, v, n);
		buf[n] = '\0';
		if (lp_parse_addr(buf, UINT64_MAX, &x, &why) == 0)
			return lp_hash_bytes(h, &x, sizeof(x));
	}
	return lp_hash_bytes(h ^ 1, v, n);
}

FILE *lp_temp_file(char **path)
{
	const char *dir = getenv("TMPDIR");
	size_t n = strlen(dir ? dir : "/tmp") + strlen(lp_progname) + 16;
	FILE *f = NULL;

	*path = lp_malloc(n);
	snprintf(*path, n, "%s/%s.XXXXXX", dir ? dir : "/tmp", lp_progname);
	int fd = mkstemp(*path);
	if (fd < 0 || !(f = fdopen(fd, "w+"))) {
		lp_error_errno("cannot create a temporary file in %s", dir ? dir : "/tmp");
		if (fd >= 0) {
			close(fd);
			unlink(*path);
		}
	}
	return f;
}

int64_t lp_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int lp_maps__open(struct lp_maps *m, pid_t pid)
{
	char path[64];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	*m = (struct lp_maps){ .f = fopen(path, "re") };
	return m->f ? 0 : -1;
}

int lp_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

int lp_maps__open_text(struct lp_maps *m, const char *text, size_t len)
{
	*m = (struct lp_maps){ .f = len ? fmemopen((void *)text, len, "r") : NULL };
	if (!len)
		errno = EINVAL;
	return m->f ? 0 : -1;
}

bool lp_maps__next(struct lp_maps *m)
{
	ssize_t n;

	while ((n = getline(&m->line, &m->cap, m->f)) > 0) {
		unsigned long long lo, hi, pgoff, ino = 0;
		unsigned int major = 0, minor = 0;
		char perms[8] = "";
		int pos = 0;

		if (m->line[n - 1] == '\n')
			m->line[n - 1] = '\0';
		/* "LO-HI PERMS PGOFF DEV INODE [NAME]" */
		if (sscanf(m->line, "%llx-%llx %7s %llx %x:%x %llu %n", &lo, &hi, perms, &pgoff, &major,
			   &minor, &ino, &pos) < 4)
			continue;
		m->exec = perms[2] == 'x';
		m->dev = makedev(major, minor);
		m->ino = ino;
		m->lo = lo;
		m->hi = hi;
		m->pgoff = pgoff;
		m->name = pos ? m->line + pos : "";
		return true;
	}
	return false;
}

void lp_maps__close(struct lp_maps *m)
{
	if (m->f)
		fclose(m->f);
	free(m->line);
	m->f = NULL;
	m->line = NULL;
}

void lp_maps__uprobes(pid_t pid, uint64_t *lo, uint64_t *hi)
{
	struct lp_maps m;

	*lo = *hi = 0;
	if (lp_maps__open(&m, pid) < 0)
		return;
	while (lp_maps__next(&m))
		if (!strcmp(m.name, "[uprobes]")) {
			*lo = m.lo;
			*hi = m.hi;
		}
	lp_maps__close(&m);
}

int lp_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int lp_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

char *lp_sibling_program(const char *name)
{
	char self[4096], *prog = NULL;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash && asprintf(&prog, "%.*s/%s", (int)(slash - self), self, name) > 0 &&
		    access(prog, X_OK) == 0)
			return prog;
		free(prog);
	}
	return lp_strdup(name);
}

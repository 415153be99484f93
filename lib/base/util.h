/* util.h - what every lp program shares: diagnostics in git's and err(3)'s
 * shape, allocation that never returns NULL, number parsing that says why it
 * refused, and output checks (EPIPE becomes SIGPIPE, as in git). */
#ifndef LP_UTIL_H
#define LP_UTIL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#define LP_VERSION "0.1.0"

/* Set once from argv[0] (its basename) by lp_init(). */
extern const char *lp_progname;

void lp_init(int argc, char **argv);
/* "lp-NAME: message" with control characters scrubbed, one write(2). */
void lp_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same, then ": strerror(errno)". */
void lp_error_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* lp_error then exit(status). */
void lp_die(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
/* "lp-NAME: --version" output and exit 0. */
void lp_print_version(void) __attribute__((noreturn));
/* After --help or --version on stdout: exit 0, or 1 with a message when it
 * could not be written (a full disk, a closed descriptor). */
void lp_exit_stdout(void) __attribute__((noreturn));

void *lp_malloc(size_t size);
void *lp_calloc(size_t n, size_t size);
void *lp_realloc(void *p, size_t size);
void *lp_reallocarray(void *p, size_t n, size_t size);

/* An array of T that grows: VEC(T) a; ... LP_PUSH(a, x); free(a.v). */
#define VEC(T) struct { T *v; size_t n, cap; }
#define LP_PUSH(vec, x)                                                              \
	do {                                                                         \
		if ((vec).n == (vec).cap) {                                          \
			(vec).cap = (vec).cap ? 2 * (vec).cap : 16;                  \
			(vec).v = lp_reallocarray((vec).v, (vec).cap, sizeof(*(vec).v)); \
		}                                                                    \
		(vec).v[(vec).n++] = (x);                                            \
	} while (0)
char *lp_strdup(const char *s);
/* Another of lp's programs, NAME: the one installed beside this one (the
 * build's or the install's bin/), else NAME alone, for PATH.  Malloc'd. */
char *lp_sibling_program(const char *name);
char *lp_strndup(const char *s, size_t n);
/* Makes *buf (of *cap bytes, NULL and 0 at first) hold at least need bytes,
 * doubling: the growable buffers that keep strings of any length. */
void lp_grow(char **buf, size_t *cap, size_t need);

/* Parse a whole string as a number within [min, max]; on failure return -1
 * and set *why ("not a number", "too small", "too large").  Numbers are
 * decimal, as the stream's and the command line's: "010" is ten, "09" nine;
 * no octal, hex, "inf", "nan", leading spaces or '+'. */
int lp_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out, const char **why);
int lp_parse_u64(const char *s, uint64_t max, uint64_t *out, const char **why);
/* An address or offset: 0x and hex digits, or decimal. */
int lp_parse_addr(const char *s, uint64_t max, uint64_t *out, const char **why);
/* A decimal real: [-]DIGITS[.DIGITS][e[+-]DIGITS]. */
int lp_parse_double(const char *s, double *out, const char **why);
/* A duration in ns: a decimal number and a unit, ns, us, ms, s, m or h;
 * a bare number is seconds, in every option, as for sleep(1) and timeout(1):
 * "250us", "3ms", "1.5", "2m". */
int lp_parse_duration(const char *s, int64_t *ns, const char **why);

/* Option values: on a bad one, "lp-NAME: --OPTION 'VALUE': why" and exit 2
 * (bad usage).  NAME is the long option's name, without the dashes. */
void lp_option_fail(const char *name, const char *arg, const char *why)
	__attribute__((noreturn));
int64_t lp_option_i64(const char *name, const char *arg, int64_t min, int64_t max);
uint64_t lp_option_u64(const char *name, const char *arg, uint64_t min, uint64_t max);
/* positive: 0 is refused too ("must be positive"). */
int64_t lp_option_duration(const char *name, const char *arg, bool positive);

/* Opens FILE for writing ("-" or NULL: stdout); exits 1 with a message.
 * In a filter, the output is flushed whenever an input goes idle
 * (lp_flush_outputs). */
FILE *lp_open_output(const char *path);
/* Flushes and checks f; on EPIPE re-raises SIGPIPE; otherwise reports and
 * returns -1.  Call before exit on every output (f is closed, unless it is
 * stdout). */
int lp_close_output(FILE *f, const char *name);
/* After a failed write: EPIPE re-raises SIGPIPE, anything else exits 1. */
void lp_write_failed(const char *name) __attribute__((noreturn));

/* Filters' outputs are flushed whenever an input goes idle (the line
 * reader asks, lp_flush_outputs): set by lp_stop__read_through_first_sigint. */
void lp_flush_outputs_when_idle(void);

/* A filter's outputs (opened by lp_open_output after
 * lp_stop__read_through_first_sigint) are flushed by lp_flush_outputs, which the
 * line reader calls before a read that would block: records read are
 * written before the filter waits for more, so a live pipeline never waits
 * on a buffer.  A flush that fails is lp_write_failed.  lp_close_output
 * takes an output off the list. */
void lp_flush_outputs(void);

/* A temporary file for a second pass over input that cannot be read twice
 * (a pipe): "$TMPDIR/lp-NAME.XXXXXX" (else /tmp), open for reading and
 * writing, its name in *path (for the caller to unlink and free); NULL
 * after a message. */
FILE *lp_temp_file(char **path);

/* pthread_create for a helper thread of a producer, with every signal
 * blocked in it: the main thread's handlers stop the producer.  0 or an
 * errno value. */
int lp_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

/* CLOCK_MONOTONIC in ns: the clock of lp streams, deadlines and timeouts. */
int64_t lp_monotonic_ns(void);

/* A process's mappings, /proc/PID/maps a line at a time (pid 0: this
 * process's own):
 *
 *	struct lp_maps m;
 *	if (lp_maps__open(&m, pid) == 0) {
 *		while (lp_maps__next(&m))
 *			... m.lo, m.hi, m.pgoff, m.name ...
 *		lp_maps__close(&m);
 *	}
 */
struct lp_maps {
	FILE *f;
	char *line;
	size_t cap;
	uint64_t lo, hi, pgoff;
	uint64_t dev, ino;	/* the mapped file's device (st_dev's) and inode; 0 when anonymous */
	const char *name;	/* its path or [name]; "" when anonymous */
	bool exec;		/* mapped executable */
};

/* -1 when the process's maps cannot be read (it is gone). */
int lp_maps__open(struct lp_maps *m, pid_t pid);
/* The same lines from text read earlier (len bytes, a process's maps kept
 * after it is gone); -1 with errno when it cannot be opened. */
int lp_maps__open_text(struct lp_maps *m, const char *text, size_t len);
bool lp_maps__next(struct lp_maps *m);
void lp_maps__close(struct lp_maps *m);

/* The page the kernel maps for uprobes in pid ("[uprobes]", once a probe
 * was hit): probed instructions are single-stepped there out of line and
 * the uretprobe trampoline runs there.  [*lo, *hi); 0, 0 when there is none
 * (or pid is gone). */
void lp_maps__uprobes(pid_t pid, uint64_t *lo, uint64_t *hi);

/* a + b, or the int64 limit it passes: times run up to INT64_MAX, so a time
 * plus a window or a second may not fit. */
static inline int64_t lp_add_sat(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

/* qsort comparators: ascending doubles and int64s, a total order. */
int lp_cmp_double(const void *a, const void *b);
int lp_cmp_i64(const void *a, const void *b);

/* Perl's "%.15g"-style number printing, integers printed exactly. */
int lp_format_number(char *buf, size_t size, double v);

/* 64-bit FNV-1a, the stream's id hash. */
static inline uint64_t lp_hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}
#define LP_HASH_INIT 0xcbf29ce484222325ULL

/* Extends hash h with the value v (n bytes): as the number it reads as
 * when it is one (lp_parse_addr: 0x1f and 31 alike, as a pointer DWARF
 * types and a raw register print it), else as its text. */
uint64_t lp_hash_number_or_text(uint64_t h, const char *v, size_t n);

/* A fast hash for in-memory caches, not the stream's ids (extra is mixed in
 * too): (h ^ w) * odd is a bijection of w, so no input bit is lost; two
 * lanes halve the dependency chain of the multiplications. */
static inline uint64_t lp_cache_hash(const char *s, size_t n, unsigned char extra)
{
	uint64_t a = 0x9e3779b97f4a7c15ULL ^ n, b = 0xc2b2ae3d27d4eb4fULL ^ extra;
	size_t i = 0;
	for (; i + 16 <= n; i += 16) {
		uint64_t w1, w2;
		memcpy(&w1, s + i, 8);
		memcpy(&w2, s + i + 8, 8);
		a = (a ^ w1) * 0x100000001b3ULL;
		b = (b ^ w2) * 0xff51afd7ed558ccdULL;
	}
	if (i + 8 <= n) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		a = (a ^ w) * 0x100000001b3ULL;
		i += 8;
	}
	uint64_t w = 0;
	if (n > i)
		memcpy(&w, s + i, n - i);
	b = (b ^ w) * 0xff51afd7ed558ccdULL;
	uint64_t h = (a ^ (b >> 29) ^ (b << 35)) * 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 32);
}


#endif

/* keyed.c - requests that are not one call (keyed.h). */
#include "capture/trace/keyed.h"

#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/util.h"

enum role { ROLE_START, ROLE_END, ROLE_CALLBACK };

/* One probe's part in a key: spec is the text lp-trace traces. */
struct part {
	char *spec;
	enum role role;
	size_t key;		/* index into keys */
	char *attr;		/* the attribute that holds the key: ret, r, arg0 */
};

struct key {
	char *name;		/* the request spans' name: key:NAME=... */
	char *attr;		/* key.NAME, for callbacks */
};

/* A request open: started, not ended yet; in the order they started.
 * Requests open under one key, newest first: a thread may free an object
 * and another make a new request of it before the free's record comes
 * (it comes at free_request's return). */
struct open {
	struct open *prev, *next;
	struct open *older;	/* the same key's, started before */
	uint64_t hash;
	size_t key;
	int32_t pid, tid;
	int64_t start_ns;
	/* When its key came to be: the start's return for ret (a pointer
	 * the start allocates is no key before), else the start's start. */
	int64_t key_ns;
	uint64_t lp_ns;		/* lp's probes in its own calls: start, callbacks, end */
	char *value;		/* the key as the start wrote it */
};

struct lp_keyed {
	struct part *parts;
	size_t nparts;
	struct key *keys;
	size_t nkeys;
	struct lp_hashmap open;	/* hash(key, pid, value) -> struct open */
	struct open *oldest, *newest;
	size_t nopen, max_open;
	uint64_t spans, evicted, unmatched;
	bool lp_ns_known;	/* the parts' records carry lp_ns= (lp-trace calibrated) */
	char *value;		/* lp_attrs__get's buffer */
	size_t value_cap;
	struct lp_attrs_buf out;
};

struct lp_keyed *lp_keyed__new(size_t max_open)
{
	struct lp_keyed *k = lp_calloc(1, sizeof(*k));
	lp_hashmap__init(&k->open);
	k->max_open = max_open ? max_open : 1;
	return k;
}

void lp_keyed__free(struct lp_keyed *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->nparts; i++) {
		free(k->parts[i].spec);
		free(k->parts[i].attr);
	}
	free(k->parts);
	for (size_t i = 0; i < k->nkeys; i++) {
		free(k->keys[i].name);
		free(k->keys[i].attr);
	}
	free(k->keys);
	for (struct open *o = k->oldest, *next; o; o = next) {
		next = o->next;
		free(o->value);
		free(o);
	}
	lp_hashmap__fini(&k->open);
	free(k->value);
	lp_attrs_buf__free(&k->out);
	free(k);
}

bool lp_keyed__is_spec(const char *text)
{
	return !strncmp(text, "key:", 4);
}

static size_t key_index(struct lp_keyed *k, const char *name, size_t len)
{
	for (size_t i = 0; i < k->nkeys; i++)
		if (strlen(k->keys[i].name) == len && !memcmp(k->keys[i].name, name, len))
			return i;
	k->keys = lp_reallocarray(k->keys, k->nkeys + 1, sizeof(*k->keys));
	struct key *key = &k->keys[k->nkeys];
	key->name = lp_strndup(name, len);
	key->attr = lp_malloc(len + 5);
	snprintf(key->attr, len + 5, "key.%s", key->name);
	return k->nkeys++;
}

/* "FUNC(KEY)": the probe to trace (FUNC alone for ret, whose value every
 * function span carries; FUNC(KEY) to capture the argument) and KEY. */
static int part_of(struct lp_keyed *k, const char *text, const char *s, size_t len,
		   enum role role, size_t key)
{
	const char *open = memchr(s, '(', len);
	if (!open || s[len - 1] != ')' || open == s || open + 2 >= s + len ||
	    memchr(open + 1, '(', (size_t)(s + len - open - 1)) ||
	    memchr(open + 1, ',', (size_t)(s + len - open - 1))) {
		lp_error("probe '%s': '%.*s': expected FUNC(KEY), KEY ret, an argument, a member (r->id) or arg0..arg5",
			 text, (int)len, s);
		return -1;
	}
	char *attr = lp_strndup(open + 1, (size_t)(s + len - open - 2));
	if (!strcmp(attr, "ret") && role != ROLE_START) {
		lp_error("probe '%s': only the start's key can be its return value (ret)", text);
		free(attr);
		return -1;
	}
	k->parts = lp_reallocarray(k->parts, k->nparts + 1, sizeof(*k->parts));
	struct part *p = &k->parts[k->nparts++];
	p->spec = strcmp(attr, "ret") ? lp_strndup(s, len) : lp_strndup(s, (size_t)(open - s));
	p->role = role;
	p->key = key;
	p->attr = attr;
	return 0;
}

int lp_keyed__add(struct lp_keyed *k, const char *text, const char *probes[2])
{
	const char *s = text + 4, *end = s + strlen(s);
	size_t nlen = strcspn(s, "=@");

	if (!nlen || !s[nlen]) {
		lp_error("probe '%s': expected key:NAME=START(KEY)..END(KEY) or key:NAME@FUNC(KEY)",
			 text);
		return -1;
	}
	size_t key = key_index(k, s, nlen);
	const char *rest = s + nlen + 1;
	if (s[nlen] == '@') {
		if (part_of(k, text, rest, (size_t)(end - rest), ROLE_CALLBACK, key) < 0)
			return -1;
		probes[0] = k->parts[k->nparts - 1].spec;
		return 1;
	}
	const char *dots = strstr(rest, "..");
	if (!dots || dots == rest || !dots[2]) {
		lp_error("probe '%s': expected key:NAME=START(KEY)..END(KEY)", text);
		return -1;
	}
	for (size_t i = 0; i < k->nparts; i++)
		if (k->parts[i].role == ROLE_START && k->parts[i].key == key) {
			lp_error("probe '%s': key %s has a start and an end already", text,
				 k->keys[key].name);
			return -1;
		}
	if (part_of(k, text, rest, (size_t)(dots - rest), ROLE_START, key) < 0 ||
	    part_of(k, text, dots + 2, (size_t)(end - dots - 2), ROLE_END, key) < 0)
		return -1;
	/* The end first: attached first, so that no request whose start is
	 * seen can end unseen (lp-trace attaches probes one by one). */
	probes[0] = k->parts[k->nparts - 1].spec;
	probes[1] = k->parts[k->nparts - 2].spec;
	return 2;
}

/* A key's value, hashed with the key and the process. */
static uint64_t value_hash(size_t key, int32_t pid, const char *v)
{
	uint64_t h = lp_hash_bytes(LP_HASH_INIT, &key, sizeof(key));

	h = lp_hash_bytes(h, &pid, sizeof(pid));
	return lp_hashmap__key(lp_hash_number_or_text(h, v, strlen(v)));
}

static void unlink_open(struct lp_keyed *k, struct open *o)
{
	*(o->prev ? &o->prev->next : &k->oldest) = o->next;
	*(o->next ? &o->next->prev : &k->newest) = o->prev;
	struct open *head = lp_hashmap__get(&k->open, o->hash);
	if (head == o) {
		if (o->older)
			lp_hashmap__put(&k->open, o->hash, o->older);
		else
			lp_hashmap__del(&k->open, o->hash);
	} else {
		while (head && head->older != o)
			head = head->older;
		if (head)
			head->older = o->older;
	}
	k->nopen--;
}

/* The request open under key v that a call starting at t is part of: the
 * newest whose key was there at t. */
static struct open *find(struct lp_keyed *k, size_t key, int32_t pid, const char *v, int64_t t)
{
	struct open *o = lp_hashmap__get(&k->open, value_hash(key, pid, v));
	while (o && (o->key_ns > t || o->key != key || o->pid != pid))
		o = o->older;
	return o;
}

static void start(struct lp_keyed *k, size_t key, int32_t pid, int32_t tid, int64_t t,
		  int64_t key_ns, const char *v, uint64_t lp_ns)
{
	uint64_t h = value_hash(key, pid, v);

	if (k->nopen >= k->max_open) {
		struct open *old = k->oldest;
		unlink_open(k, old);
		free(old->value);
		free(old);
		k->evicted++;
	}
	struct open *o = lp_calloc(1, sizeof(*o));
	*o = (struct open){ .hash = h, .key = key, .pid = pid, .tid = tid, .start_ns = t,
			    .key_ns = key_ns, .lp_ns = lp_ns, .value = lp_strdup(v), .prev = k->newest,
			    .older = lp_hashmap__get(&k->open, h) };
	*(k->newest ? &k->newest->next : &k->oldest) = o;
	k->newest = o;
	lp_hashmap__put(&k->open, h, o);
	k->nopen++;
}

static int write_request(struct lp_keyed *k, struct lp_writer *w, const struct open *o,
			 int64_t end_ns, int32_t end_tid)
{
	lp_attrs_buf__reset(&k->out);
	lp_attrs_buf__add(&k->out, "key", o->value);
	if (end_ns != LP_TIME_NONE)
		lp_attrs_buf__add_i64(&k->out, "end_tid", 7, end_tid);
	/* What lp-split takes out of its duration: the probes in its own
	 * calls (the waits between them are the loop's, not lp's). */
	if (k->lp_ns_known)
		lp_attrs_buf__add_i64(&k->out, "lp_ns", 5, (int64_t)o->lp_ns);
	struct lp_span s = {
		.start_ns = o->start_ns, .end_ns = end_ns, .pid = o->pid, .tid = o->tid,
		.probe = k->keys[o->key].name, .depth = 0, .attrs = lp_attrs_buf__attrs(&k->out),
	};
	return lp_writer__span(w, &s);
}

/* The record's lp_ns=, 0 when it has none. */
static uint64_t record_lp_ns(struct lp_keyed *k, const struct lp_attrs *a)
{
	char *end;
	if (lp_attrs__get(a, "lp_ns", &k->value, &k->value_cap) < 0)
		return 0;
	k->lp_ns_known = true;
	return strtoull(k->value, &end, 10);
}

int lp_keyed__record(struct lp_keyed *k, const char *spec, int32_t pid, int32_t tid,
		     int64_t start_ns, int64_t end_ns, struct lp_attrs_buf *attrs,
		     struct lp_writer *w)
{
	for (size_t i = 0; i < k->nparts; i++) {
		const struct part *p = &k->parts[i];
		if (strcmp(p->spec, spec))
			continue;
		struct lp_attrs a = lp_attrs_buf__attrs(attrs);
		uint64_t lp_ns = record_lp_ns(k, &a);
		if (lp_attrs__get(&a, p->attr, &k->value, &k->value_cap) < 0)
			continue;	/* not captured (no DWARF for the name): said at attach */
		struct open *o = p->role == ROLE_START ? NULL
			       : find(k, p->key, pid, k->value, start_ns);
		switch (p->role) {
		case ROLE_CALLBACK:
			lp_attrs_buf__add(attrs, k->keys[p->key].attr, k->value);
			if (o)
				o->lp_ns += lp_ns;
			break;
		case ROLE_START:
			start(k, p->key, pid, tid, start_ns,
			      strcmp(p->attr, "ret") ? start_ns : end_ns, k->value, lp_ns);
			break;
		case ROLE_END: {
			if (!o) {
				k->unmatched++;
				break;
			}
			o->lp_ns += lp_ns;
			unlink_open(k, o);
			int r = write_request(k, w, o, end_ns, tid);
			free(o->value);
			free(o);
			k->spans++;
			if (r < 0)
				return -1;
			break;
		}
		}
	}
	return 0;
}

int lp_keyed__finish(struct lp_keyed *k, struct lp_writer *w, int64_t now_ns)
{
	for (struct open *o = k->oldest; o; o = o->next)
		if (write_request(k, w, o, LP_TIME_NONE, 0) < 0)
			return -1;
	struct lp_lost lost[] = {
		{ .time_ns = now_ns, .what = "keyed-evicted", .count = k->evicted },
		{ .time_ns = now_ns, .what = "keyed-unmatched", .count = k->unmatched },
	};
	for (size_t i = 0; i < 2; i++)
		if (lost[i].count && lp_writer__lost(w, &lost[i]) < 0)
			return -1;
	return 0;
}

void lp_keyed__counts(const struct lp_keyed *k, uint64_t *spans, uint64_t *open,
		      uint64_t *evicted, uint64_t *unmatched)
{
	*spans = k->spans;
	*open = k->nopen;
	*evicted = k->evicted;
	*unmatched = k->unmatched;
}

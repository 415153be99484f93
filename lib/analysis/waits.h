/* waits.h - where a request of callbacks waited (lp-split -e on lp-trace's
 * key: requests): of the time a request was open but not in one of its own
 * callbacks, the part its threads spent in other requests' callbacks
 * (an event loop serving others, a pool's workers busy) and the rest
 * (the loop itself, idle, blocked outside any callback).
 *
 * Every callback span is added with the request it worked for; then, per
 * request, the other requests' callback time on each thread it ran on,
 * within its life, averaged over those threads (one thread: exactly the
 * time it waited while others ran).  A callback inside another on its
 * thread (nginx's output filter inside its phase handler) counts once, as
 * the outer one.  Memory: one entry per callback. */
#ifndef LP_WAITS_H
#define LP_WAITS_H

#include <stddef.h>
#include <stdint.h>

struct lp_waits;

struct lp_waits *lp_waits__new(void);
void lp_waits__free(struct lp_waits *w);
/* A callback of request req (an index the caller gives its requests) on
 * thread pid/tid from start to end, ns of it the callback's own (less
 * lp's probes). */
void lp_waits__add(struct lp_waits *w, int32_t pid, int32_t tid, int64_t start, int64_t end,
		   double ns, size_t req);
/* Once every callback is added. */
void lp_waits__finish(struct lp_waits *w);
/* Request req, open from start to end: the other requests' callback time
 * on its threads within it (ns, the mean over its threads); 0 when it ran
 * no callback. */
double lp_waits__others(const struct lp_waits *w, size_t req, int64_t start, int64_t end);

#endif

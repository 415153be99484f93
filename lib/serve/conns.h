/* conns.h - the connections lp-serve's server holds, each with when it
 * began to send its request: one that has not sent it whole in time
 * (sending nothing, or a byte a second) is shut down, whatever
 * libmicrohttpd's idle timeout, which any byte renews.  Safe from any
 * thread; nothing of libmicrohttpd's is called under its lock. */
#ifndef LP_CONNS_H
#define LP_CONNS_H

#include <stdbool.h>
#include <stdint.h>

struct lp_conns;
struct lp_conn;

struct lp_conns *lp_conns__new(void);
/* Once every connection is removed. */
void lp_conns__free(struct lp_conns *cs);
/* A connection accepted, its socket fd: its first request read from now. */
struct lp_conn *lp_conns__add(struct lp_conns *cs, int fd);
/* Closed: called before its socket is closed, so that no descriptor is
 * shut down once it may be another's. */
void lp_conns__remove(struct lp_conns *cs, struct lp_conn *k);
/* Its request whole (false: left be), or its next one read from now. */
void lp_conns__reading(struct lp_conns *cs, struct lp_conn *k, bool reading);
/* Shuts down (both ways: its server reads the end and closes it) each
 * connection that has been reading a request for longer than limit_ns;
 * how many. */
int lp_conns__sweep(struct lp_conns *cs, int64_t limit_ns);

#endif

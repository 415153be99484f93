/* conns.c - the connections of lp-serve's server and how long each has
 * been sending its request (conns.h). */
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "base/util.h"
#include "serve/conns.h"

struct lp_conn {
	struct lp_conn *prev, *next;
	int fd;
	bool reading;		/* its request not whole yet */
	int64_t since_ns;	/* when it began to be read */
};

struct lp_conns {
	pthread_mutex_t lock;
	struct lp_conn *head;
};

struct lp_conns *lp_conns__new(void)
{
	struct lp_conns *cs = lp_calloc(1, sizeof(*cs));

	pthread_mutex_init(&cs->lock, NULL);
	return cs;
}

void lp_conns__free(struct lp_conns *cs)
{
	if (!cs)
		return;
	pthread_mutex_destroy(&cs->lock);
	free(cs);
}

struct lp_conn *lp_conns__add(struct lp_conns *cs, int fd)
{
	struct lp_conn *k = lp_calloc(1, sizeof(*k));

	k->fd = fd;
	k->reading = true;
	k->since_ns = lp_monotonic_ns();
	pthread_mutex_lock(&cs->lock);
	k->next = cs->head;
	if (cs->head)
		cs->head->prev = k;
	cs->head = k;
	pthread_mutex_unlock(&cs->lock);
	return k;
}

void lp_conns__remove(struct lp_conns *cs, struct lp_conn *k)
{
	if (!k)
		return;
	pthread_mutex_lock(&cs->lock);
	if (k->prev)
		k->prev->next = k->next;
	else
		cs->head = k->next;
	if (k->next)
		k->next->prev = k->prev;
	pthread_mutex_unlock(&cs->lock);
	free(k);
}

void lp_conns__reading(struct lp_conns *cs, struct lp_conn *k, bool reading)
{
	if (!k)
		return;
	pthread_mutex_lock(&cs->lock);
	k->reading = reading;
	if (reading)
		k->since_ns = lp_monotonic_ns();
	pthread_mutex_unlock(&cs->lock);
}

int lp_conns__sweep(struct lp_conns *cs, int64_t limit_ns)
{
	int64_t now = lp_monotonic_ns();
	int n = 0;

	pthread_mutex_lock(&cs->lock);
	for (struct lp_conn *k = cs->head; k; k = k->next) {
		if (k->reading && k->fd >= 0 && now - k->since_ns > limit_ns) {
			k->reading = false;	/* once */
			shutdown(k->fd, SHUT_RDWR);
			n++;
		}
	}
	pthread_mutex_unlock(&cs->lock);
	return n;
}

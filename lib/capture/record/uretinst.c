/* uretinst.c - see uretinst.h.  The BPF glue of snapshot mode: one task
 * iterator link per target process (kernel >= 6.1 filters a task iterator by
 * process), and one iterator instance from it for each thread whose stack
 * needs it, created before the thread is held and closed after (6-14 us and
 * 3-4 us on this VM), so the hold pays for one read (5-7 us).  An instance
 * not read waits for the next thread. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>
/* bpf/uretprobes.h by path, beside the skeleton. */
#include "bpf/uretprobes.h"
#include "capture/bpflog.h"
#include "capture/record/uretinst.h"
#include "uretprobes.skel.h"
#include "base/util.h"

struct lp_uretinst {
	struct uretprobes_bpf *skel;
	struct bpf_link *link;	/* the iterator over the target's threads */
	pid_t pid;		/* the target; 0: none yet */
	int fd;			/* the iterator armed for the next read; -1 */
	bool used;		/* fd was read: an iterator is read once */
	struct lp_uret_rec buf[1 + LP_URET_MAX + 1];
};

struct lp_uretinst *lp_uretinst__open(int verbose)
{
	struct lp_uretinst *u = lp_calloc(1, sizeof(*u));
	int err;

	u->fd = -1;
	lp_bpflog__init(verbose);
	u->skel = uretprobes_bpf__open();
	if (!u->skel) {
		err = errno;
		goto fail;
	}
	if ((err = -uretprobes_bpf__load(u->skel)))
		goto fail;
	return u;
fail:
	lp_uretinst__free(u);
	errno = err;
	return NULL;
}

void lp_uretinst__free(struct lp_uretinst *u)
{
	if (!u)
		return;
	lp_uretinst__disarm(u);
	bpf_link__destroy(u->link);
	uretprobes_bpf__destroy(u->skel);
	free(u);
}

int lp_uretinst__target(struct lp_uretinst *u, pid_t pid)
{
	union bpf_iter_link_info info = { .task.pid = (__u32)pid };
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &info,
		    .link_info_len = sizeof(info));
	struct bpf_link *link;

	if (u->link && u->pid == pid)
		return 0;
	lp_uretinst__disarm(u);
	link = bpf_program__attach_iter(u->skel->progs.lp_uret_dump, &opts);
	if (!link)
		return -1;
	bpf_link__destroy(u->link);
	u->link = link;
	u->pid = pid;
	return 0;
}

int lp_uretinst__arm(struct lp_uretinst *u)
{
	if (u->fd >= 0 && !u->used)
		return 0;
	lp_uretinst__disarm(u);
	if (!u->link)
		return errno = ESRCH, -1;
	if ((u->fd = bpf_iter_create(bpf_link__fd(u->link))) < 0)
		return -1;
	u->used = false;
	return 0;
}

void lp_uretinst__disarm(struct lp_uretinst *u)
{
	if (u->fd >= 0)
		close(u->fd);
	u->fd = -1;
}

int lp_uretinst__read(struct lp_uretinst *u, pid_t tid, struct lp_uret_thread *t)
{
	size_t got = 0, want = sizeof(u->buf[0]);
	ssize_t n = 0;

	if (u->fd < 0 || u->used)
		return errno = EBADF, -1;
	u->used = true;
	/* The program runs at the read, which is when it looks at this. */
	u->skel->bss->target_tid = (__u32)tid;
	/* The thread's record says how many follow: a read to the end (one
	 * more system call) only when they did not all come at once.  An
	 * iterator is read once. */
	while (got < want) {
		n = read(u->fd, (char *)u->buf + got, sizeof(u->buf) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got >= sizeof(u->buf[0]) && u->buf[0].kind == LP_URET_THREAD)
			want = sizeof(u->buf[0]) *
			       (1 + (u->buf[0].a < LP_URET_MAX ? u->buf[0].a : LP_URET_MAX));
	}
	int err = n < 0 ? errno : ESRCH;
	size_t nrec = got / sizeof(u->buf[0]);
	if (!nrec || u->buf[0].kind != LP_URET_THREAD || u->buf[0].tid != (__u32)tid)
		return errno = err, -1;
	t->depth = (uint32_t)u->buf[0].a;
	t->step = u->buf[0].b;
	t->n = 0;
	for (size_t i = 1; i < nrec && t->n < LP_URETINST_MAX; i++) {
		if (u->buf[i].kind != LP_URET_INSTANCE)
			break;
		t->slot[t->n] = u->buf[i].a;
		t->orig[t->n] = u->buf[i].b;
		t->n++;
	}
	return 0;
}

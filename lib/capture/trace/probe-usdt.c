/* probe-usdt.c - usdt:[FILE:]PROVIDER:NAME: the probe found in FILE, the
 * executable or the files it maps or needs (an __entry/__return pair taken
 * as one span), with its arguments as values. */
#include "capture/trace/probe.h"
#include "capture/trace/probe-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "capture/trace/usdt.h"

/* The probe PROVIDER:NAME among a file's, or NULL. */
static const struct lp_usdt_probe *usdt_find(const struct lp_usdt_probe *u, size_t nu,
					     const char *provider, const char *name)
{
	for (size_t i = 0; i < nu; i++)
		if (!strcmp(u[i].provider, provider) && !strcmp(u[i].name, name))
			return &u[i];
	return NULL;
}

/* usdt:PROVIDER:X where the file has no X but X__entry and X__return (or
 * X__start and X__done): the pair's halves in pair[], true. */
static bool usdt_pair(const struct lp_usdt_probe *u, size_t nu, const struct lp_probe_spec *spec,
		      const struct lp_usdt_probe *pair[2])
{
	static const char *const halves[][2] = { { "__entry", "__return" }, { "__start", "__done" } };
	for (size_t k = 0; k < sizeof(halves) / sizeof(halves[0]); k++) {
		for (int h = 0; h < 2; h++) {
			char name[256];
			snprintf(name, sizeof(name), "%s%s", spec->name, halves[k][h]);
			pair[h] = usdt_find(u, nu, spec->provider, name);
		}
		if (pair[0] && pair[1])
			return true;
	}
	return false;
}

/* Why PROVIDER:NAME is not in path: the provider's probes there, else the
 * providers it has. */
static void usdt_missing(const struct lp_probe_spec *spec, const char *path, const char *also,
			 const struct lp_usdt_probe *u, size_t nu)
{
	if (!nu) {
		lp_error("probe '%s': no USDT probes in %s%s", spec->text, path, also);
		return;
	}
	char list[1024] = "";
	size_t len = 0;
	bool prov = false;
	for (size_t i = 0; i < nu; i++)
		prov |= !strcmp(u[i].provider, spec->provider);
	for (size_t i = 0; i < nu && len < sizeof(list); i++) {
		if (prov ? strcmp(u[i].provider, spec->provider)
			 : i && !strcmp(u[i].provider, u[i - 1].provider))
			continue;
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s%s%s", len ? ", " : "",
					u[i].provider, prov ? ":" : "", prov ? u[i].name : "");
	}
	lp_error("probe '%s': no USDT probe %s:%s in %s%s; %s: %s", spec->text, spec->provider,
		 spec->name, path, also, prov ? "its probes there" : "its providers", list);
}

/* flags: LP_PROBE_F_OPEN or _CLOSE for a pair's halves (attached in that
 * order, one after the other), else 0.  The values: the arguments listed in
 * the spec (cap.off: which; ":str" a C string), else all, typed by size and
 * sign from the argument spec; a closing half has none (its span carries
 * the opening half's).  -1 after a message. */
static int usdt_point(const struct lp_probe_spec *spec, const char *path, const struct lp_usdt_probe *u,
		      unsigned flags, struct lp_probe_point **points, size_t *n)
{
	struct lp_probe_point *pt = lp_probe_new_point(spec, path, points, n);
	pt->name = lp_strdup(spec->text);
	pt->cfg.kind = LP_PROBE_USDT;
	pt->cfg.flags = flags;
	pt->usdt_provider = lp_strdup(u->provider);
	pt->usdt_name = lp_strdup(u->name);
	/* sys/sdt.h puts a 1-byte nop at every probe site on x86 (_SDT_NOP):
	 * its class is what a hit costs. */
	static const unsigned char sdt_nop[] = { 0x90 };
	pt->insn = lp_insn__classify(sdt_nop, sizeof(sdt_nop));
	if (flags & LP_PROBE_F_CLOSE)
		return 0;
	int size[LP_TRACE_MAX_CAPS], nstrs = 0;
	bool sign[LP_TRACE_MAX_CAPS];
	/* An argument spec lp cannot read: the probe still fires, without values. */
	int k = lp_usdt__arg_types(u->args, size, sign, LP_TRACE_MAX_CAPS);
	size_t nv = spec->nvars ? spec->nvars : (size_t)(k > 0 ? k : 0);
	for (size_t i = 0; i < nv; i++) {
		int a = spec->nvars ? atoi(spec->vars[i] + 3) : (int)i;
		bool str = spec->nvars && strchr(spec->vars[i], ':');
		if (a >= k) {
			lp_error("probe '%s': %s:%s in %s has %d argument%s (arg0 to arg%d)", spec->text,
				 u->provider, u->name, path, k < 0 ? 0 : k, k == 1 ? "" : "s", k - 1);
			return -1;
		}
		char nm[16];
		snprintf(nm, sizeof(nm), "arg%d", a);
		struct lp_probe_value v = { .size = str ? 8 : size[a],
					    .type = str ? LP_VAL_STR : sign[a] ? LP_VAL_INT : LP_VAL_UINT };
		if (lp_probe_add_value(pt, nm, &v, (struct lp_trace_cap){ .off = a }, &nstrs) < 0)
			return -1;
	}
	return 0;
}

/* usdt:[FILE:]PROVIDER:NAME: in FILE, else in the executable, then the
 * files pid maps (or the libraries it needs, pid 0). */
int lp_probe_usdt_points(const struct lp_probe_spec *spec, const char *exe, pid_t pid,
			 struct lp_probe_point **points, size_t *n)
{
	size_t nfiles;
	char **files;
	if (spec->lib) {
		char *path = lp_probe_find_lib(spec->lib, pid);
		if (!path) {
			lp_error("probe '%s': no file or library '%s'", spec->text, spec->lib);
			return -1;
		}
		files = lp_calloc(1, sizeof(*files));
		files[0] = path;
		nfiles = 1;
	} else {
		files = lp_probe_target_files(exe, pid, &nfiles);
	}
	int ret = -1;
	struct lp_usdt_probe *all = NULL;	/* every file's, for the message */
	size_t nall = 0;
	for (size_t i = 0; i < nfiles && ret < 0; i++) {
		struct lp_usdt_probe *u;
		size_t nu;
		if (lp_usdt__read(files[i], &u, &nu) < 0) {
			if (i == 0)
				break;
			continue;
		}
		const struct lp_usdt_probe *hit = usdt_find(u, nu, spec->provider, spec->name), *pair[2];
		/* Found: 0, or -1 for good after the values' message. */
		if (hit) {
			ret = usdt_point(spec, files[i], hit, 0, points, n);
		} else if (usdt_pair(u, nu, spec, pair)) {
			hit = pair[0];
			ret = usdt_point(spec, files[i], pair[0], LP_PROBE_F_OPEN, points, n);
			if (ret == 0)
				ret = usdt_point(spec, files[i], pair[1], LP_PROBE_F_CLOSE, points, n);
		}
		all = lp_reallocarray(all, nall + nu, sizeof(*all));
		memcpy(all + nall, u, nu * sizeof(*u));
		nall += nu;
		free(u);
		if (hit)
			break;
		if (i == nfiles - 1)
			usdt_missing(spec, files[0], nfiles == 1 ? "" : pid > 0 ? " or the files it maps"
								  : " or the libraries it needs", all, nall);
	}
	lp_usdt__free(all, nall);
	lp_usdt__free_files(files, nfiles);
	return ret;
}

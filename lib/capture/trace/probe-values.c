/* probe-values.c - the values a probe captures: DWARF types and locations
 * of a function's parameters and return, or of a line's variables (and the
 * members read through them), made the captures the BPF side reads. */
#include "capture/trace/probe.h"
#include "capture/trace/probe-internal.h"

#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "debuginfo/dwarf.h"

/* A DWARF value type as a capture: 0; 1 when void; -1 with `why` when it
 * cannot be captured. */
static int probe_value(const struct lp_dwtype *t, struct lp_probe_value *v, char *why,
		       size_t whysize)
{
	static const enum lp_value_type types[] = {
		[LP_DWT_INT] = LP_VAL_INT, [LP_DWT_UINT] = LP_VAL_UINT, [LP_DWT_BOOL] = LP_VAL_BOOL,
		[LP_DWT_CHAR] = LP_VAL_CHAR, [LP_DWT_PTR] = LP_VAL_PTR, [LP_DWT_STR] = LP_VAL_STR,
	};

	if (t->kind == LP_DWT_VOID)
		return 1;
	if (t->kind == LP_DWT_OTHER) {
		snprintf(why, whysize, "its type '%s' is not an integer, a pointer or a C string",
			 t->name ? t->name : "?");
		return -1;
	}
	v->type = types[t->kind];
	v->size = t->size;
	return 0;
}

/* Integer-class arguments in the SysV x86-64 order: rdi rsi rdx rcx r8 r9. */
static const unsigned char arg_regs[6] = { 5, 4, 1, 2, 8, 9 };

int lp_probe_add_value(struct lp_probe_point *pt, const char *name, const struct lp_probe_value *v,
		       struct lp_trace_cap cap, int *nstrs)
{
	if (pt->nvals >= LP_TRACE_MAX_CAPS) {
		lp_error("probe '%s': at most %d values a probe", pt->spec->text, LP_TRACE_MAX_CAPS);
		return -1;
	}
	cap.size = (unsigned char)v->size;
	if (v->type == LP_VAL_STR) {
		if (*nstrs < LP_TRACE_MAX_STRS)
			cap.str = (unsigned char)(1 + (*nstrs)++);
	}
	struct lp_probe_value *dst = &pt->vals[pt->nvals];
	*dst = *v;
	dst->name = lp_strdup(name);
	if (v->type == LP_VAL_STR && !cap.str)
		dst->type = LP_VAL_PTR;	/* out of string slots: the pointer */
	pt->cfg.caps[pt->nvals] = cap;
	pt->nvals++;
	pt->cfg.ncaps = (unsigned int)pt->nvals;
	return 0;
}

/* argN (N 0..5): the raw argument register N, as bpftrace's argN.  1 when
 * name is not one, -1 on error. */
static int raw_arg(struct lp_probe_point *pt, const char *v, int *nstrs)
{
	if (strncmp(v, "arg", 3) || v[3] < '0' || v[3] > '5' || v[4])
		return 1;
	struct lp_probe_value raw = { .type = LP_VAL_INT, .size = 8 };
	struct lp_trace_cap cap = { .kind = LP_CAP_REG, .reg = arg_regs[v[3] - '0'] };
	return lp_probe_add_value(pt, v, &raw, cap, nstrs) < 0 ? -1 : 0;
}

/* A function without DWARF: arg0..arg5 are the raw argument registers;
 * anything else needs DWARF. */
static int raw_values(struct lp_probe_point *pt, const char *path)
{
	const struct lp_probe_spec *spec = pt->spec;
	int nstrs = 0;

	for (size_t i = 0; i < spec->nvars; i++) {
		int r = raw_arg(pt, spec->vars[i], &nstrs);
		if (r > 0)
			lp_error("probe '%s': %s has no DWARF debug information for '%s' (arg0..arg5 are its raw arguments)",
				 spec->text, path, spec->func);
		if (r)
			return -1;
	}
	/* The raw return register, as a signed long (what most C functions
	 * return; -1 and errors read right). */
	pt->has_ret = true;
	pt->ret = (struct lp_probe_value){ .name = lp_strdup("ret"), .type = LP_VAL_INT, .size = 8 };
	return 0;
}

/* A parameter, and the integer register it comes in (-1: none, why). */
struct func_arg {
	char name[128];
	struct lp_probe_value v;
	int reg;
	char why[256];
	uint64_t die;		/* its DWARF entry, for the members read through it */
};

/* The parameters in the SysV order, each in the next integer register
 * until one that is not an integer or a pointer (it may shift the rest). */
static size_t func_args(const struct lp_dwparam *params, size_t n, struct func_arg *args)
{
	int nextreg = 0;

	for (size_t k = 0; k < n; k++) {
		struct func_arg *a = &args[k];
		snprintf(a->name, sizeof(a->name), "%s", params[k].name ? params[k].name : "?");
		a->die = params[k].die;
		memset(&a->v, 0, sizeof(a->v));
		a->why[0] = '\0';
		int tr = probe_value(&params[k].type, &a->v, a->why, sizeof(a->why));
		if (tr == 0 && nextreg >= 0 && nextreg < 6) {
			a->reg = arg_regs[nextreg++];
			continue;
		}
		a->reg = -1;
		if (tr == 0)
			snprintf(a->why, sizeof(a->why), "it is not passed in a register");
		/* Anything else may shift the registers: stop. */
		nextreg = -1;
	}
	return n;
}

_Static_assert(LP_DW_MAX_DEREF == LP_CAP_MAX_DEREF, "a member path is one capture");

/* A member path read from a variable where cap reads it: the capture of
 * the member, its value type in *v.  0; -1 with why. */
static int path_capture(const struct lp_dwpath *dp, struct lp_trace_cap *cap,
			struct lp_probe_value *v, char *why, size_t whysize)
{
	if (dp->off0 && cap->kind == LP_CAP_REG) {
		snprintf(why, whysize, "it is in a register: it has no members there");
		return -1;
	}
	cap->off += dp->off0;
	cap->nderef = (unsigned char)dp->nderef;
	for (int i = 0; i < dp->nderef; i++) {
		if (dp->deref[i] > INT32_MAX) {
			snprintf(why, whysize, "a member too far into its struct");
			return -1;
		}
		cap->deref[i] = (int)dp->deref[i];
	}
	/* Named as C writes it ("char[]"), not by its DWARF name. */
	struct lp_dwtype t = dp->type;
	t.name = dp->type_name;
	memset(v, 0, sizeof(*v));
	int r = probe_value(&t, v, why, whysize);
	if (r > 0)
		snprintf(why, whysize, "it has no type");
	return r ? -1 : 0;
}

/* The VARs a function probe names, among its parameters args (dw: the
 * types of the members VARs read). */
static int named_args(struct lp_probe_point *pt, const struct func_arg *args, size_t nargs,
		      struct lp_dwarf *dw)
{
	const struct lp_probe_spec *spec = pt->spec;
	int nstrs = 0;

	for (size_t i = 0; i < spec->nvars; i++) {
		const char *var = spec->vars[i];
		size_t namelen = lp_probe_value_name_len(var), k;
		for (k = 0; k < nargs; k++)
			if (strlen(args[k].name) == namelen && !strncmp(args[k].name, var, namelen))
				break;
		if (var[namelen] && k < nargs) {
			/* A member read through a parameter: r->conn. */
			char why[256];
			struct lp_dwpath dp;
			struct lp_probe_value v;
			struct lp_trace_cap cap = { .kind = LP_CAP_REG, .reg = (unsigned char)args[k].reg };
			if (args[k].reg < 0) {
				lp_error("probe '%s': cannot capture '%s': %s", spec->text, var, args[k].why);
				return -1;
			}
			if (lp_dwarf__param_path(dw, args[k].die, var, namelen, &dp, why, sizeof(why)) < 0 ||
			    path_capture(&dp, &cap, &v, why, sizeof(why)) < 0) {
				lp_error("probe '%s': cannot capture '%s': %s", spec->text, var, why);
				return -1;
			}
			if (lp_probe_add_value(pt, var, &v, cap, &nstrs) < 0)
				return -1;
			continue;
		}
		if (var[namelen] && k == nargs && !strncmp(var, "arg", 3) && namelen == 4) {
			lp_error("probe '%s': cannot capture '%s': %.4s is a raw register, without a type to read members by",
				 spec->text, var, var);
			return -1;
		}
		int r = k == nargs ? raw_arg(pt, spec->vars[i], &nstrs) : 1;
		if (r < 0)
			return -1;
		if (r == 0)
			continue;
		if (k == nargs) {
			char list[512] = "";
			for (size_t j = 0; j < nargs; j++)
				snprintf(list + strlen(list), sizeof(list) - strlen(list),
					 "%s%.100s", j ? ", " : "", args[j].name);
			lp_error("probe '%s': %s has no parameter '%.*s' (it has: %s)",
				 spec->text, spec->func, (int)namelen, var, nargs ? list : "none");
			return -1;
		}
		if (args[k].reg < 0) {
			lp_error("probe '%s': cannot capture '%s': %s", spec->text,
				 args[k].name, args[k].why);
			return -1;
		}
		struct lp_trace_cap cap = { .kind = LP_CAP_REG, .reg = (unsigned char)args[k].reg };
		if (lp_probe_add_value(pt, args[k].name, &args[k].v, cap, &nstrs) < 0)
			return -1;
	}
	return 0;
}

#define LP_MAX_PARAMS 32

int lp_probe_func_values(struct lp_probe_point *pt, struct lp_dwarf *dw, uint64_t addr,
			 const char *path)
{
	const struct lp_probe_spec *spec = pt->spec;
	struct lp_dwtype rt;
	struct lp_dwparam params[LP_MAX_PARAMS];
	size_t np;

	if (!lp_dwarf__function(dw, addr, &rt, params, LP_MAX_PARAMS, &np))
		return raw_values(pt, path);
	char why[256];
	struct lp_probe_value rv = { 0 };
	if (probe_value(&rt, &rv, why, sizeof(why)) == 0) {
		if (rv.type == LP_VAL_STR)	/* not read back at the return: the pointer */
			rv.type = LP_VAL_PTR;
		pt->has_ret = true;
		pt->ret = rv;
		pt->ret.name = lp_strdup("ret");
	}
	if (!spec->nvars && !spec->all_args)
		return 0;
	struct func_arg args[LP_MAX_PARAMS];
	size_t nargs = func_args(params, np, args);
	if (spec->nvars)
		return named_args(pt, args, nargs, dw);
	int nstrs = 0;
	for (size_t k = 0; k < nargs && pt->nvals < LP_TRACE_MAX_CAPS; k++) {
		if (args[k].reg < 0)
			continue;
		struct lp_trace_cap cap = { .kind = LP_CAP_REG, .reg = (unsigned char)args[k].reg };
		lp_probe_add_value(pt, args[k].name, &args[k].v, cap, &nstrs);
	}
	return 0;
}

/* Variable name of a line probe, in scope sc at pc: 0; -1 with the
 * message in err (lp-trace's, --vars' reason). */
int lp_probe_line_value(struct lp_probe_point *pt, struct lp_dwscope *sc, const char *name,
			uint64_t pc, int *nstrs, char *err, size_t errsize)
{
	const struct lp_probe_spec *spec = pt->spec;
	struct lp_dwtype t;
	struct lp_probe_value val = { 0 };
	struct lp_dwloc loc;
	struct lp_dwpath dp;
	char why[256], var[128];
	size_t namelen = lp_probe_value_name_len(name);

	snprintf(var, sizeof(var), "%.*s", (int)namelen, name);
	if (!lp_dwscope__var(sc, var, &t)) {
		snprintf(err, errsize, "probe '%s': no variable '%s' in scope at 0x%llx", spec->text,
			 var, (unsigned long long)pc);
		return -1;
	}
	if (name[namelen] && lp_dwscope__path(sc, name, namelen, &dp, why, sizeof(why)) < 0) {
		snprintf(err, errsize, "probe '%s': cannot capture '%s': %s", spec->text, name, why);
		return -1;
	}
	int r = name[namelen] ? 0 : probe_value(&t, &val, why, sizeof(why));
	if (r != 0) {
		snprintf(err, errsize, "probe '%s': cannot capture '%s': %s", spec->text, name,
			 r > 0 ? "it has no type" : why);
		return -1;
	}
	r = lp_dwscope__location(sc, &loc, why, sizeof(why));
	if (r > 0)
		snprintf(err, errsize, "probe '%s': cannot capture '%s': it has no location (optimized out)",
			 spec->text, name);
	if (r < 0)
		snprintf(err, errsize, "probe '%s': cannot capture '%s' at 0x%llx: %s", spec->text,
			 name, (unsigned long long)pc, why);
	if (r)
		return -1;
	struct lp_trace_cap cap = { .kind = loc.mem ? LP_CAP_MEM : LP_CAP_REG, .off = loc.off };
	cap.reg = loc.reg == LP_DWLOC_ADDR ? LP_REG_NONE
		: loc.reg == LP_DWLOC_CFA ? LP_REG_CFA : (unsigned char)loc.reg;
	if (name[namelen] && path_capture(&dp, &cap, &val, why, sizeof(why)) < 0) {
		snprintf(err, errsize, "probe '%s': cannot capture '%s': %s", spec->text, name, why);
		return -1;
	}
	if (loc.reg == LP_DWLOC_CFA) {
		pt->cfg.cfa_reg = loc.cfa_reg;
		pt->cfg.cfa_off = loc.cfa_off;
	}
	return lp_probe_add_value(pt, name, &val, cap, nstrs);
}

/* The values of a line probe's VARs at pc; quiet: a trial at a candidate
 * address, said nothing of (lp_probe_choose_line_addr). */
int lp_probe_line_values(struct lp_probe_point *pt, struct lp_dwarf *dw, uint64_t cu, uint64_t pc,
			 bool quiet)
{
	const struct lp_probe_spec *spec = pt->spec;
	if (!spec->nvars)
		return 0;
	struct lp_dwscope *sc = lp_dwarf__scope(dw, cu, pc);
	int nstrs = 0, r = 0;
	char err[512];
	for (size_t v = 0; v < spec->nvars && r == 0; v++)
		r = lp_probe_line_value(pt, sc, spec->vars[v], pc, &nstrs, err, sizeof(err));
	if (r < 0 && !quiet)
		lp_error("%s", err);
	lp_dwscope__free(sc);
	return r;
}

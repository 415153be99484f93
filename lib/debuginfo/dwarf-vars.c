/* dwarf-vars.c - values in a file's DWARF (struct lp_dwarf), for
 * lp-trace's probes: types (how a value is read, its name as C writes it),
 * functions with their parameters (the one starting at an address, or
 * every one), the variables in scope at an address (struct lp_dwscope),
 * where each lives there, and the members read through one (r->conn). */
#include <elfutils/libdw.h>
#include <dwarf.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "debuginfo/dwarf.h"
#include "debuginfo/dwarf-internal.h"

/* die's DW_AT_type without typedefs and qualifiers; false: none (void). */
static bool strip_type(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute a;
	if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, out))
		return false;
	for (int i = 0; i < 16; i++) {
		int tag = dwarf_tag(out);
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
		    tag != DW_TAG_volatile_type && tag != DW_TAG_restrict_type &&
		    tag != DW_TAG_atomic_type)
			return true;
		if (!dwarf_attr_integrate(out, DW_AT_type, &a) || !dwarf_formref_die(&a, out))
			return false;	/* const void */
	}
	return true;
}

static Dwarf_Word udata(Dwarf_Die *die, unsigned name)
{
	Dwarf_Attribute a;
	Dwarf_Word v = 0;

	if (dwarf_attr_integrate(die, name, &a))
		dwarf_formudata(&a, &v);
	return v;
}

static enum lp_dwtype_kind base_kind(Dwarf_Word enc)
{
	switch (enc) {
	case DW_ATE_signed:
		return LP_DWT_INT;
	case DW_ATE_unsigned:
		return LP_DWT_UINT;
	case DW_ATE_boolean:
		return LP_DWT_BOOL;
	case DW_ATE_signed_char:
	case DW_ATE_unsigned_char:
		return LP_DWT_CHAR;
	}
	return LP_DWT_OTHER;
}

/* The value type of die's DW_AT_type. */
static struct lp_dwtype value_type(Dwarf_Die *die)
{
	Dwarf_Die t, to;
	if (!strip_type(die, &t))
		return (struct lp_dwtype){ LP_DWT_VOID, 0, NULL };
	Dwarf_Word size = udata(&t, DW_AT_byte_size);
	struct lp_dwtype other = { LP_DWT_OTHER, 0, dwarf_diename(&t) };
	switch (dwarf_tag(&t)) {
	case DW_TAG_base_type:
		if (size != 1 && size != 2 && size != 4 && size != 8)
			return other;
		enum lp_dwtype_kind k = base_kind(udata(&t, DW_AT_encoding));
		return k == LP_DWT_OTHER ? other : (struct lp_dwtype){ k, (int)size, NULL };
	case DW_TAG_enumeration_type:
		return (struct lp_dwtype){ LP_DWT_INT, size ? (int)size : 4, NULL };
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		/* Passed and kept as the object's address. */
		return (struct lp_dwtype){ LP_DWT_PTR, 8, NULL };
	case DW_TAG_pointer_type:
		if (strip_type(&t, &to) && dwarf_tag(&to) == DW_TAG_base_type &&
		    udata(&to, DW_AT_byte_size) == 1 && base_kind(udata(&to, DW_AT_encoding)) == LP_DWT_CHAR)
			return (struct lp_dwtype){ LP_DWT_STR, 8, NULL };
		return (struct lp_dwtype){ LP_DWT_PTR, 8, NULL };
	}
	return other;
}

/* a, b and c joined into buf, cut to fit. */
static void join3(char *buf, size_t size, const char *a, const char *b, const char *c)
{
	size_t len = 0;
	for (const char *const *p = (const char *const[]){ a, b, c, NULL }; *p; p++)
		for (const char *q = *p; *q && len + 1 < size; q++)
			buf[len++] = *q;
	buf[len] = '\0';
}

/* die's DW_AT_type as C writes it, "const char *", "struct req *",
 * "int[]" (a function pointer is "(function) *"): into buf, "void" for
 * none.  depth bounds a malformed chain. */
static void type_name(Dwarf_Die *die, char *buf, size_t size, int depth)
{
	Dwarf_Attribute a;
	Dwarf_Die t;
	char inner[128];

	if (size == 0)
		return;
	if (depth > 16 || !dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, &t)) {
		snprintf(buf, size, depth > 16 ? "?" : "void");
		return;
	}
	const char *nm = dwarf_diename(&t), *kw = "";
	switch (dwarf_tag(&t)) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type: {
		const char *op = dwarf_tag(&t) == DW_TAG_pointer_type ? "*"
				 : dwarf_tag(&t) == DW_TAG_reference_type ? "&" : "&&";
		type_name(&t, inner, sizeof(inner), depth + 1);
		size_t l = strlen(inner);
		bool tight = l && (inner[l - 1] == '*' || inner[l - 1] == '&');
		join3(buf, size, inner, tight ? "" : " ", op);
		return;
	}
	case DW_TAG_const_type:
	case DW_TAG_volatile_type: {
		const char *q = dwarf_tag(&t) == DW_TAG_const_type ? "const" : "volatile";
		type_name(&t, inner, sizeof(inner), depth + 1);
		size_t l = strlen(inner);
		/* A qualified pointer is "char *const"; a qualified value "const char". */
		if (l && (inner[l - 1] == '*' || inner[l - 1] == '&'))
			join3(buf, size, inner, q, "");
		else
			join3(buf, size, q, " ", inner);
		return;
	}
	case DW_TAG_restrict_type:
	case DW_TAG_atomic_type:
		type_name(&t, buf, size, depth + 1);
		return;
	case DW_TAG_array_type:
		type_name(&t, inner, sizeof(inner), depth + 1);
		join3(buf, size, inner, "[]", "");
		return;
	case DW_TAG_subroutine_type:
		snprintf(buf, size, "(function)");
		return;
	case DW_TAG_structure_type: kw = "struct "; break;
	case DW_TAG_union_type: kw = "union "; break;
	case DW_TAG_enumeration_type: kw = "enum "; break;
	case DW_TAG_class_type: kw = "class "; break;
	}
	join3(buf, size, nm ? kw : "", nm ? nm : "?", "");
}

/* A function's formal parameters (up to max, *n of them). */
static void func_params(Dwarf_Die *fn, struct lp_dwparam *params, size_t max, size_t *n)
{
	Dwarf_Die child;

	*n = 0;
	if (dwarf_child(fn, &child) != 0)
		return;
	do {
		if (dwarf_tag(&child) != DW_TAG_formal_parameter || *n >= max)
			continue;
		params[*n].name = dwarf_diename(&child);
		params[*n].die = dwarf_dieoffset(&child);
		params[*n].type = value_type(&child);
		type_name(&child, params[*n].type_name, sizeof(params[*n].type_name), 0);
		++*n;
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* Whether a function's code starts at addr: its low_pc, or, split into
 * ranges (GCC's -O2 moves a function's unlikely paths to a .cold part:
 * DW_AT_ranges, no low_pc), the start of one of them. */
static bool starts_at(Dwarf_Die *die, uint64_t addr)
{
	Dwarf_Addr lo, base, l, h;
	ptrdiff_t off = 0;

	if (dwarf_lowpc(die, &lo) == 0)
		return lo == addr;
	while ((off = dwarf_ranges(die, off, &base, &l, &h)) > 0)
		if (l == addr)
			return true;
	return false;
}

int lp_dw_func_cb(Dwarf_Die *die, void *arg)
{
	struct func_find *ff = arg;
	if (starts_at(die, ff->addr)) {
		ff->die = *die;
		ff->found = true;
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

bool lp_dwarf__function(struct lp_dwarf *d, uint64_t addr, struct lp_dwtype *ret,
			struct lp_dwparam *params, size_t max, size_t *n)
{
	Dwarf_Die cu;
	struct func_find ff = { .addr = addr };

	*n = 0;
	/* Go's DWARF gives a function's results as parameters (and no
	 * aranges): its functions are read by their ABI's registers. */
	if (!lp_dw_unit_of(d, addr, &cu) || dwarf_srclang(&cu) == DW_LANG_Go)
		return false;
	dwarf_getfuncs(&cu, lp_dw_func_cb, &ff, 0);
	if (!ff.found)
		return false;
	*ret = value_type(&ff.die);
	func_params(&ff.die, params, max, n);
	return true;
}

struct lp_dwscope *lp_dwarf__scope(struct lp_dwarf *d, uint64_t cu, uint64_t pc)
{
	struct lp_dwscope *sc = lp_calloc(1, sizeof(*sc));
	Dwarf_Die cudie;

	sc->d = d;
	sc->pc = pc;
	if (!d->dw || !dwarf_offdie(d->dw, cu, &cudie) ||
	    (sc->n = dwarf_getscopes(&cudie, pc, &sc->scopes)) < 0) {
		sc->n = 0;
		return sc;
	}
	/* dwarf_getscopes goes from an inlined copy to its abstract tree's
	 * scopes, not to the functions it is inlined into: those are the
	 * copy's own parents (as lp_dwmod__funcs reads the chain).  The
	 * blocks inside the copy, then the copy and what holds it. */
	int first = -1;
	for (int i = 0; i < sc->n && first < 0; i++)
		if (lp_dw_is_function(&sc->scopes[i]))
			first = i;
	Dwarf_Die *chain = NULL;
	int nc = first >= 0 && dwarf_tag(&sc->scopes[first]) == DW_TAG_inlined_subroutine
		 ? dwarf_getscopes_die(&sc->scopes[first], &chain) : 0;
	if (nc > 0) {
		Dwarf_Die *all = lp_reallocarray(NULL, (size_t)(first + nc), sizeof(*all));
		memcpy(all, sc->scopes, (size_t)first * sizeof(*all));
		memcpy(all + first, chain, (size_t)nc * sizeof(*all));
		free(sc->scopes);
		sc->scopes = all;
		sc->n = first + nc;
	}
	free(chain);
	return sc;
}

void lp_dwscope__free(struct lp_dwscope *sc)
{
	if (!sc)
		return;
	free(sc->scopes);
	free(sc->vars);
	free(sc->var_scope);
	free(sc);
}

size_t lp_dwscope__nvars(struct lp_dwscope *sc)
{
	if (sc->vars_read)
		return sc->nvars;
	sc->vars_read = true;
	for (int i = 0; i < sc->n; i++) {
		int tag = dwarf_tag(&sc->scopes[i]);
		if (tag != DW_TAG_lexical_block && !lp_dw_is_function(&sc->scopes[i]))
			break;	/* the unit, a namespace: globals */
		Dwarf_Die child;
		if (dwarf_child(&sc->scopes[i], &child) != 0)
			continue;
		do {
			tag = dwarf_tag(&child);
			if (tag != DW_TAG_variable && tag != DW_TAG_formal_parameter)
				continue;
			sc->vars = lp_reallocarray(sc->vars, sc->nvars + 1, sizeof(*sc->vars));
			sc->var_scope = lp_reallocarray(sc->var_scope, sc->nvars + 1, sizeof(*sc->var_scope));
			sc->vars[sc->nvars] = child;
			sc->var_scope[sc->nvars++] = i;
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	return sc->nvars;
}

void lp_dwscope__var_at(struct lp_dwscope *sc, size_t i, struct lp_dwvar *v)
{
	Dwarf_Die *die = &sc->vars[i];
	Dwarf_Attribute a;

	memset(v, 0, sizeof(*v));
	sc->var = *die;
	v->name = dwarf_diename(die);
	v->param = dwarf_tag(die) == DW_TAG_formal_parameter;
	v->type = value_type(die);
	type_name(die, v->type_name, sizeof(v->type_name), 0);
	for (int k = sc->var_scope[i]; k < sc->n; k++)
		if (lp_dw_is_function(&sc->scopes[k])) {
			v->func = dwarf_diename(&sc->scopes[k]);
			v->inlined = dwarf_tag(&sc->scopes[k]) == DW_TAG_inlined_subroutine;
			break;
		}
	if (!dwarf_attr(die, DW_AT_location, &a) && dwarf_attr_integrate(die, DW_AT_const_value, &a)) {
		Dwarf_Sword sv;
		Dwarf_Word uv;
		if (dwarf_formsdata(&a, &sv) == 0) {
			v->has_const = true;
			v->const_value = (long long)sv;
		} else if (dwarf_formudata(&a, &uv) == 0) {
			v->has_const = true;
			v->const_value = (long long)uv;
		}
	}
}

bool lp_dwscope__var(struct lp_dwscope *sc, const char *name, struct lp_dwtype *t)
{
	for (int i = 0; i < sc->n; i++) {
		Dwarf_Die child;
		if (dwarf_child(&sc->scopes[i], &child) != 0)
			continue;
		do {
			int tag = dwarf_tag(&child);
			if (tag != DW_TAG_variable && tag != DW_TAG_formal_parameter)
				continue;
			Dwarf_Attribute a;
			const char *nm = dwarf_attr_integrate(&child, DW_AT_name, &a) ?
				dwarf_formstring(&a) : NULL;
			if (nm && !strcmp(nm, name)) {
				sc->var = child;
				*t = value_type(&child);
				return true;
			}
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	return false;
}

static const char *op_name(unsigned int op)
{
	switch (op) {
	case DW_OP_entry_value: case DW_OP_GNU_entry_value: return "DW_OP_entry_value";
	case DW_OP_stack_value: return "DW_OP_stack_value (a computed value)";
	case DW_OP_piece: return "DW_OP_piece (split across places)";
	case DW_OP_implicit_value: return "DW_OP_implicit_value";
	case DW_OP_implicit_pointer: case DW_OP_GNU_implicit_pointer: return "DW_OP_implicit_pointer";
	case DW_OP_lit0 ... DW_OP_lit31: return "DW_OP_litN (a constant)";
	case DW_OP_const1u ... DW_OP_consts: return "DW_OP_constN (a constant)";
	case DW_OP_call_frame_cfa: return "DW_OP_call_frame_cfa";
	case DW_OP_deref: return "DW_OP_deref";
	case DW_OP_plus_uconst: return "DW_OP_plus_uconst";
	}
	return "an unsupported DWARF expression";
}

/* DW_OP_fbreg off: the frame base of the innermost real function. */
static int frame_base_loc(struct lp_dwscope *sc, long long off, struct lp_dwloc *loc,
			  char *why, size_t whysize)
{
	for (int i = 0; i < sc->n; i++) {
		if (dwarf_tag(&sc->scopes[i]) != DW_TAG_subprogram)
			continue;
		Dwarf_Attribute fb;
		Dwarf_Op *fexpr;
		size_t flen;
		if (!dwarf_attr_integrate(&sc->scopes[i], DW_AT_frame_base, &fb) ||
		    dwarf_getlocation_addr(&fb, sc->pc, &fexpr, &flen, 1) <= 0 || flen != 1)
			break;
		unsigned int fop = fexpr[0].atom;
		if (fop == DW_OP_call_frame_cfa) {
			if (lp_dwarf__cfa(sc->d, sc->pc, &loc->cfa_reg, &loc->cfa_off) < 0) {
				snprintf(why, whysize, "no call frame information at 0x%llx",
					 (unsigned long long)sc->pc);
				return -1;
			}
			loc->mem = true;
			loc->reg = LP_DWLOC_CFA;
			loc->off = off;
			return 0;
		}
		if (fop >= DW_OP_breg0 && fop <= DW_OP_breg16) {
			loc->mem = true;
			loc->reg = fop - DW_OP_breg0;
			loc->off = off + (long long)fexpr[0].number;
			return 0;
		}
		/* A register's value (clang's rbp, or rsp at -O2). */
		if (fop >= DW_OP_reg0 && fop <= DW_OP_reg16) {
			loc->mem = true;
			loc->reg = fop - DW_OP_reg0;
			loc->off = off;
			return 0;
		}
		snprintf(why, whysize, "its frame base is %s", op_name(fop));
		return -1;
	}
	snprintf(why, whysize, "no usable frame base");
	return -1;
}

/* Names what makes an expression unsupported: a computed value first. */
static int unsupported(const Dwarf_Op *expr, size_t len, char *why, size_t whysize)
{
	unsigned int op = expr[0].atom, bad = op;
	for (size_t i = 0; i < len; i++) {
		unsigned int a = expr[i].atom;
		if (a == DW_OP_stack_value || a == DW_OP_piece || a == DW_OP_entry_value ||
		    a == DW_OP_GNU_entry_value || a == DW_OP_implicit_value) {
			bad = a;
			break;
		}
		if (i > 0 && bad == op)
			bad = a;
	}
	const char *nm = op_name(bad);
	char tmp[64];
	if (!strcmp(nm, "an unsupported DWARF expression")) {
		snprintf(tmp, sizeof(tmp), "a DWARF expression (op 0x%x)", bad);
		nm = tmp;
	}
	snprintf(why, whysize, "its location there is %s, not a register, a frame or register offset or a fixed address",
		 nm);
	return -1;
}

int lp_dwscope__location(struct lp_dwscope *sc, struct lp_dwloc *loc, char *why, size_t whysize)
{
	Dwarf_Attribute attr;
	Dwarf_Op *expr;
	size_t len;

	memset(loc, 0, sizeof(*loc));
	if (!dwarf_attr(&sc->var, DW_AT_location, &attr))
		return 1;
	int n = dwarf_getlocation_addr(&attr, sc->pc, &expr, &len, 1);
	if (n <= 0 || len == 0) {
		snprintf(why, whysize, "it is optimized out at this address");
		return -1;
	}
	unsigned int op = expr[0].atom;
	if (len == 1 && op >= DW_OP_reg0 && op <= DW_OP_reg16) {
		loc->reg = op - DW_OP_reg0;
	} else if (len == 1 && op == DW_OP_regx && expr[0].number <= 16) {
		loc->reg = (unsigned)expr[0].number;
	} else if (len == 1 && op >= DW_OP_breg0 && op <= DW_OP_breg16) {
		*loc = (struct lp_dwloc){ .mem = true, .reg = op - DW_OP_breg0,
					  .off = (long long)expr[0].number };
	} else if (len == 1 && op == DW_OP_addr) {
		*loc = (struct lp_dwloc){ .mem = true, .reg = LP_DWLOC_ADDR,
					  .off = (long long)expr[0].number };
	} else if (len == 1 && op == DW_OP_fbreg) {
		return frame_base_loc(sc, (long long)expr[0].number, loc, why, whysize);
	} else {
		return unsupported(expr, len, why, whysize);
	}
	return 0;
}

/* --- members read through a variable: r->conn, s.hdr.len ------------- */

static bool is_aggregate(Dwarf_Die *t)
{
	int tag = dwarf_tag(t);
	return tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_class_type;
}

/* The member name (len bytes) of aggregate s, looked for in its anonymous
 * members and (C++) base classes too: its DIE and its offset in s. */
static bool find_member(Dwarf_Die *s, const char *name, size_t len, Dwarf_Die *m, long long *off,
			int depth)
{
	Dwarf_Die child, t;

	if (depth > 8 || dwarf_child(s, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);
		if (tag != DW_TAG_member && tag != DW_TAG_inheritance)
			continue;
		const char *nm = dwarf_diename(&child);
		long long here = (long long)udata(&child, DW_AT_data_member_location);
		if (tag == DW_TAG_member && nm && strlen(nm) == len && !memcmp(nm, name, len)) {
			*m = child;
			*off = here;
			return true;
		}
		if ((tag == DW_TAG_inheritance || !nm) && strip_type(&child, &t) && is_aggregate(&t) &&
		    find_member(&t, name, len, m, off, depth + 1)) {
			*off += here;
			return true;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* The names of aggregate s's members, ", "-separated, into buf. */
static void member_names(Dwarf_Die *s, char *buf, size_t size)
{
	Dwarf_Die child;
	size_t len = 0;

	buf[0] = '\0';
	if (dwarf_child(s, &child) != 0)
		return;
	do {
		const char *nm = dwarf_diename(&child);
		if (dwarf_tag(&child) == DW_TAG_member && nm && len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "", nm);
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* path applied to variable var (named expr): see lp_dwpath. */
static int resolve_path(Dwarf_Die *var, const char *expr, const char *path,
			struct lp_dwpath *out, char *why, size_t whysize)
{
	Dwarf_Die cur = *var, t;
	char tn[96], names[256];

	memset(out, 0, sizeof(*out));
	for (const char *p = path; *p;) {
		int done = (int)(p - expr);	/* the expression read so far */
		bool arrow = p[0] == '-' && p[1] == '>';
		if (!arrow && *p != '.') {
			snprintf(why, whysize, "expected -> or . after '%.*s'", done, expr);
			return -1;
		}
		p += arrow ? 2 : 1;
		size_t n = 0;
		while (isalnum((unsigned char)p[n]) || p[n] == '_')
			n++;
		if (!n) {
			snprintf(why, whysize, "expected a member's name after '%.*s'",
				 (int)(p - expr), expr);
			return -1;
		}
		type_name(&cur, tn, sizeof(tn), 0);
		if (!strip_type(&cur, &t)) {
			snprintf(why, whysize, "'%.*s' has no type", done, expr);
			return -1;
		}
		int tag = dwarf_tag(&t);
		bool ptr = tag == DW_TAG_pointer_type;
		/* A C++ reference reads as the object: r.x follows it. */
		bool ref = tag == DW_TAG_reference_type || tag == DW_TAG_rvalue_reference_type;
		if (arrow && !ptr) {
			snprintf(why, whysize, "'%.*s' is not a pointer (it is %s)", done, expr, tn);
			return -1;
		}
		if (!arrow && ptr) {
			snprintf(why, whysize, "'%.*s' is a pointer (%s): '%.*s->%.*s'", done, expr,
				 tn, done, expr, (int)n, p);
			return -1;
		}
		if (ptr || ref) {
			if (out->nderef == LP_DW_MAX_DEREF) {
				snprintf(why, whysize, "at most %d pointers followed in a value",
					 LP_DW_MAX_DEREF);
				return -1;
			}
			if (!strip_type(&t, &t)) {
				snprintf(why, whysize, "'%.*s' is a void pointer", done, expr);
				return -1;
			}
			out->nderef++;
		}
		if (!is_aggregate(&t)) {
			snprintf(why, whysize, "'%.*s' is not a struct, union or class (it is %s)",
				 done, expr, tn);
			return -1;
		}
		if (dwarf_hasattr_integrate(&t, DW_AT_declaration)) {
			/* Its definition may be in another unit; not looked for. */
			snprintf(why, whysize, "the type of '%.*s' (%s) is incomplete where it is declared",
				 done, expr, tn);
			return -1;
		}
		Dwarf_Die m;
		long long off;
		if (!find_member(&t, p, n, &m, &off, 0)) {
			if (ptr || ref)	/* "struct req *": the struct's name */
				tn[strcspn(tn, "*&")] = '\0';
			size_t l = strlen(tn);
			while (l && tn[l - 1] == ' ')
				tn[--l] = '\0';
			member_names(&t, names, sizeof(names));
			snprintf(why, whysize, "%s has no member '%.*s' (it has: %s)", tn, (int)n, p,
				 names[0] ? names : "none");
			return -1;
		}
		if (dwarf_hasattr_integrate(&m, DW_AT_bit_size)) {
			snprintf(why, whysize, "'%.*s' is a bit-field", (int)n, p);
			return -1;
		}
		if (out->nderef)
			out->deref[out->nderef - 1] += off;
		else
			out->off0 += off;
		cur = m;
		p += n;
	}
	out->type = value_type(&cur);
	type_name(&cur, out->type_name, sizeof(out->type_name), 0);
	return 0;
}

int lp_dwarf__param_path(struct lp_dwarf *d, uint64_t param, const char *expr, size_t namelen,
			 struct lp_dwpath *out, char *why, size_t whysize)
{
	Dwarf_Die die;

	if (!d->dw || !dwarf_offdie(d->dw, param, &die)) {
		snprintf(why, whysize, "no DWARF entry for '%.*s'", (int)namelen, expr);
		return -1;
	}
	return resolve_path(&die, expr, expr + namelen, out, why, whysize);
}

int lp_dwscope__path(struct lp_dwscope *sc, const char *expr, size_t namelen,
		     struct lp_dwpath *out, char *why, size_t whysize)
{
	return resolve_path(&sc->var, expr, expr + namelen, out, why, whysize);
}

struct each_func {
	void (*fn)(const struct lp_dwfuncinfo *, void *);
	void *arg;
	bool lines;
};

static int each_func_cb(Dwarf_Die *die, void *arg)
{
	struct each_func *ef = arg;
	struct lp_dwparam params[LP_DW_MAX_PARAMS];
	struct lp_dwfuncinfo fi = { .lines = ef->lines, .params = params };
	Dwarf_Addr lo;

	/* Out of line: an entry (an abstract instance or a declaration has
	 * none); split into ranges (a .cold part), the first, which GCC
	 * gives to the function's start. */
	Dwarf_Addr base, hi;
	if (dwarf_entrypc(die, &lo) != 0 && dwarf_lowpc(die, &lo) != 0 &&
	    dwarf_ranges(die, 0, &base, &lo, &hi) <= 0)
		return DWARF_CB_OK;
	fi.addr = lo;
	fi.name = dwarf_diename(die);
	fi.decl_file = lp_dw_decl_file(die);
	if (dwarf_decl_line(die, &fi.decl_line) != 0)
		fi.decl_line = 0;
	func_params(die, params, LP_DW_MAX_PARAMS, &fi.nparams);
	ef->fn(&fi, ef->arg);
	return DWARF_CB_OK;
}

void lp_dwarf__each_function(struct lp_dwarf *d, void (*fn)(const struct lp_dwfuncinfo *, void *),
			     void *arg)
{
	Dwarf_Off off = 0;
	Dwarf_Die cu;
	struct each_func ef = { fn, arg, false };

	while (lp_dw_next_unit(d->dw, &off, &cu)) {
		Dwarf_Lines *lines;
		size_t nlines;

		ef.lines = dwarf_getsrclines(&cu, &lines, &nlines) == 0 && nlines > 0;
		dwarf_getfuncs(&cu, each_func_cb, &ef, 0);
	}
}

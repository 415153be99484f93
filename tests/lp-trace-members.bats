#!/usr/bin/env bats
# lp-trace reads members through DWARF: FUNC(r->conn->serial),
# FILE:LINE(local.hdr.len).  tests/workloads/fields.c sets every member from
# the call's number i (len 3i, id 7i in an anonymous union, serial 1000 + i
# and port i % 1000 behind a second pointer, host "odd" or "even"; every
# tenth call's conn NULL), so each captured value is checked against the
# others: a wrong offset reads another member's value.  tests/workloads/
# members.cc does the same in C++: a base class's member, a reference.

load helpers/common

setup() {
	load_bats_libs
	T=$BATS_TEST_TMPDIR
	SRC=$LP_TOP/tests/workloads/fields.c
	LINE=$(grep -n '/\* LINE-PROBE \*/' "$SRC" | cut -d: -f1)
}

# check_calls FILE PROBE: every record of PROBE has the values of one call
# i, the i in order 1..300; prints "calls nulls bad".
check_calls() {
	awk -F'\t' -v probe="$2" '
		($1 == "span" && $6 == probe) || ($1 == "event" && $5 == probe) {
			delete v
			for (f = 6; f <= NF; f++) { k = index($f, "="); if (k) v[substr($f, 1, k - 1)] = substr($f, k + 1) }
			p = probe == "handle" ? "r->" : "local."
			i = v[p "hdr.len"] / 3
			n++
			if (i != n || v[p "hdr.id"] != 7 * i) { bad++; next }
			if (i % 10 == 0) {
				# conn is NULL: what lies behind it reads 0, never a
				# small address read as a pointer.
				nulls++
				if (v[p "conn->serial"] != 0) bad++
				if (probe == "handle" && (v["r->conn->peer.port"] != 0 || v["r->conn->host"] != "(null)")) bad++
				next
			}
			if (v[p "conn->serial"] != 1000 + i) bad++
			if (probe == "handle" && v["r->conn->peer.port"] != i % 1000) bad++
			if (probe == "handle" && v["r->conn->host"] != (i % 2 ? "odd" : "even")) bad++
		}
		END { print n + 0, nulls + 0, bad + 0 }' "$1"
}

@test "lp-trace: members through two pointers, a nested struct, an anonymous union and a C string, each the call's own" {
	require_root
	run -0 --separate-stderr lp-trace -o "$T/f.lp" \
		'handle(r->conn->serial, r->hdr.id, r->conn->peer.port, r->conn->host, r->hdr.len)' \
		-- "$WORKLOADS/fields" 300
	run -0 check_calls "$T/f.lp" handle
	assert_output "300 30 0"
	# The values are named as written; the return value still comes.
	run -0 grep -c -P '^span\t.*\thandle\t0\tr->conn->serial=\d+\tr->hdr.id=\d+\tr->conn->peer.port=\d+\tr->conn->host=\S+\tr->hdr.len=\d+\tret=\d+' "$T/f.lp"
	assert_output 300
}

@test "lp-trace: a line probe reads members of a struct in the frame (local.hdr.len) and through its pointers" {
	require_root
	run -0 --separate-stderr lp-trace -o "$T/l.lp" \
		"fields.c:$LINE(local.hdr.len, local.conn->serial, local.hdr.id)" -- "$WORKLOADS/fields" 300
	run -0 check_calls "$T/l.lp" "fields.c:$LINE"
	assert_output "300 30 0"
}

# refused STATUS PROBE MESSAGE: lp-trace PROBE on fields exits STATUS,
# saying "lp-trace: probe 'PROBE': MESSAGE" and nothing else.
refused() {
	run --separate-stderr lp-trace "$2" -- "$WORKLOADS/fields" 1
	assert_equal "$status" "$1"
	assert_equal "$stderr" "lp-trace: probe '$2': $3"
}

@test "lp-trace: a member that cannot be read is refused with the reason, naming the members there are" {
	refused 1 'handle(r->nosuch)' "cannot capture 'r->nosuch': struct req has no member 'nosuch' (it has: phase, conn, hdr, flags)"
	refused 1 'handle(r->conn->nope)' "cannot capture 'r->conn->nope': struct conn has no member 'nope' (it has: name, serial, peer, host)"
	refused 1 'handle(r.conn)' "cannot capture 'r.conn': 'r' is a pointer (struct req *): 'r->conn'"
	refused 1 'handle(r->hdr->len)' "cannot capture 'r->hdr->len': 'r->hdr' is not a pointer (it is struct hdr)"
	refused 1 'handle(r->flags)' "cannot capture 'r->flags': 'flags' is a bit-field"
	refused 1 'handle(r->conn->name)' "cannot capture 'r->conn->name': its type 'char[]' is not an integer, a pointer or a C string"
	refused 1 'handle(q->x)' "handle has no parameter 'q' (it has: r)"
	refused 1 'handle(arg0->x)' "cannot capture 'arg0->x': arg0 is a raw register, without a type to read members by"
	refused 2 'handle(r-->x)' "bad value 'r-->x': expected NAME, NAME->MEMBER or NAME.MEMBER"
	refused 2 'handle(r->)' "bad value 'r->': expected NAME, NAME->MEMBER or NAME.MEMBER"
}

@test "lp-trace: C++ members: of a base class, through a reference (q.n) and a pointer (p->base_id)" {
	require_root
	run -0 --separate-stderr lp-trace -o "$T/m.lp" 'serve(q.n, q.base_id, p->n, p->base_id)' \
		-- "$WORKLOADS/members" 200
	# tests/workloads/members.cc: call i has q.n 5i, q.base_id 1000 + i,
	# p->n 11i, p->base_id 2000 + i.
	run -0 awk -F'\t' '$1 == "span" && $6 ~ /^serve\(/ { n++
		if ($8 != "q.n=" 5 * n || $9 != "q.base_id=" 1000 + n || $10 != "p->n=" 11 * n || $11 != "p->base_id=" 2000 + n) bad++ }
		END { print n + 0, bad + 0 }' "$T/m.lp"
	assert_output "200 0"
}

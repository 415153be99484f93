#!/usr/bin/env bats
# perf.data read as a stream (lib/stream/foreign/perfdata.c, formats/foreign.md):
# perf record's files and pipes against perf script on the same file, sample
# by sample and frame by frame; cpusplit's split through lp-symbolize;
# lost samples; perf record -z's compressed records against the same
# records decompressed apart (tests/helpers/perfdata-zstd); damaged files
# refused with what is wrong, never a crash.
# The recordings need root (CI=true: they run); the rest reads the fuzz
# corpus's small perf record files (tests/fuzz/corpus/perfdata).

load helpers/common
load helpers/cpusplit

SEEDS=$LP_TOP/tests/fuzz/corpus/perfdata
# compressed records made and undone with libzstd's own calls (its usage atop)
PERFDATA_ZSTD=$LP_TOP/tests/helpers/perfdata-zstd

# record OUT ARG...: perf record ARG... into OUT, failing the test with its
# error when it fails.
record() {
	local out=$1
	shift
	perf record -o "$out" "$@" 2>"$T/record.err" >/dev/null || fail "perf record: $(cat "$T/record.err")"
}

# Each sample's TIME PID TID CPU WEIGHT, from an lp stream and from perf script
# (whose lines of a pipe's file show the callchain too).
lp_ids() {
	awk -F'\t' '$1 == "sample" { print $2, $3, $4, $5, $8 }' "$1"
}
perf_ids() {
	perf script -i "$1" -F pid,tid,cpu,time,period --ns 2>/dev/null |
		awk '$1 ~ /^[0-9]+\/[0-9]+$/ { split($1, p, "/"); c = $2; gsub(/[][]/, "", c); t = $3; sub(/:$/, "", t)
		       sub(/\./, "", t); sub(/^0+/, "", t); print t, p[1], p[2], c + 0, $4 }'
}

# Each sample's stack, leaf first, "ADDR(MODULE)" as perf script -F ip,dso
# prints it (with the symbol too, for a pipe's file): a file's address as its offset (a caller's return address: the
# raw frame's, which is one less, plus one), a kernel one without its module.
lp_stacks() {
	awk -F'\t' '
	$1 == "frame" { a = $4; sub(/^0x/, "", a); addr[$2] = a == "-" ? "0" : a
			mod[$2] = $5 == "-" ? "[unknown]" : $5; kind[$2] = $3 }
	$1 == "stack" { st[$2] = $3 }
	$1 == "sample" { n = split(st[$9], f, ","); s = ""
		for (i = n; i >= 1; i--) {
			a = addr[f[i]]; m = mod[f[i]]
			if (i < n && kind[f[i]] == "u" && kind[f[i + 1]] == "u" && (m ~ /^\// || m == "[vdso]"))
				a = sprintf("%x", strtonum("0x" a) + 1)
			s = s " " a (kind[f[i]] == "k" ? "" : "(" m ")")
		}
		print substr(s, 2) }' "$1"
}
perf_stacks() {
	perf script -i "$1" -F ip,dso 2>/dev/null |
		awk 'BEGIN { RS = ""; FS = "\n" } { s = ""
			for (i = 1; i <= NF; i++) {
				n = split($i, w, " ")	# ADDR (DSO), or ADDR SYM (DSO)
				if (n)
					s = s " " w[1] (w[1] ~ /^ffff/ ? "" : w[n])
			}
			print substr(s, 2) }'
}

# same WHAT A B: files A and B are the same, else the test fails with their
# first difference.
same() {
	cmp -s "$2" "$3" || fail "$1 differ: $(diff "$2" "$3" | head -4)"
}

@test "perf record -g of cpusplit: a()'s share within 3 points of its rounds and of perf script's; every sample's time, ids, period and stack as perf script's" {
	require_root
	require_cmd perf
	record "$T/perf.data" -F 999 -g --sample-cpu -- "$WORKLOADS/cpusplit" 300 3 "$T/truth"
	run --separate-stderr -0 lp-cat "$T/perf.data"
	[ -z "$stderr" ] || fail "lp-cat said: $stderr"
	printf '%s\n' "$output" >"$T/pd.lp"
	run -0 lp-cat --check "$T/pd.lp"
	lp-symbolize "$T/pd.lp" >"$T/sym.lp"
	lp-collapse "$T/sym.lp" >"$T/pd.folded"
	perf script -i "$T/perf.data" >"$T/script.txt" 2>/dev/null
	lp-cat "$T/script.txt" >"$T/script.lp"
	lp-collapse "$T/script.lp" >"$T/script.folded"
	n=$(nsamples "$T/pd.lp") m=$(nsamples "$T/script.lp")
	s=$(share_a "$T/pd.folded") p=$(share_a "$T/script.folded") truth=$(truth_a "$T/truth")
	echo "perf.data: a() $s% of $n samples; perf script | lp-cat: $p% of $m; cpusplit: $truth%"
	[ "$n" -ge 1500 ] || fail "only $n samples"
	[ "$n" -eq "$m" ] || fail "$n samples read, perf script shows $m"
	within "$s" "$(awk -v t="$truth" 'BEGIN { print t - 3 }')" "$(awk -v t="$truth" 'BEGIN { print t + 3 }')" \
		"a()'s share against cpusplit's rounds"
	within "$s" "$(awk -v t="$p" 'BEGIN { print t - 3 }')" "$(awk -v t="$p" 'BEGIN { print t + 3 }')" \
		"a()'s share against perf script's"
	# in perf script's order (by time), each exactly
	lp_ids "$T/pd.lp" >"$T/lp.ids"
	perf_ids "$T/perf.data" >"$T/perf.ids"
	[ "$(wc -l <"$T/perf.ids")" -eq "$n" ]
	same "times, pids, tids, cpus and periods" "$T/lp.ids" "$T/perf.ids"
	lp_stacks "$T/pd.lp" >"$T/lp.stacks"
	perf_stacks "$T/perf.data" >"$T/perf.stacks"
	same "stacks" "$T/lp.stacks" "$T/perf.stacks"
	# the workload's own frames carry its build-id, for lp-symbolize to check
	id=$(readelf -n "$WORKLOADS/cpusplit" | awk '/Build ID/ { print $3 }')
	grep -q $'\t'"$WORKLOADS/cpusplit"$'\t-\t-\tbuild_id='"$id"'$' "$T/pd.lp"
}

# Each sample's user frames, leaf first, "NAME@MODULE": from a symbolized
# stream, and as perf script -F ip,sym,dso --no-inline names them (perf's
# symbol versions, "@@GLIBC_2.17", left out: lp leaves them out too; a PLT
# stub's "@plt" kept, as both say it).
lp_names() {
	awk -F'\t' '
	$1 == "frame" { name[$2] = ($6 == "-" ? "[unknown]" : $6) "@" ($5 == "-" ? "[unknown]" : $5); kind[$2] = $3 }
	$1 == "stack" { st[$2] = $3 }
	$1 == "sample" { n = split(st[$9], f, ","); s = ""
		for (i = n; i >= 1; i--) if (kind[f[i]] != "k") s = s " " name[f[i]]
		print substr(s, 2) }' "$1"
}
perf_names() {
	perf script -i "$1" -F ip,sym,dso --no-inline 2>/dev/null |
		awk 'BEGIN { RS = ""; FS = "\n" } { s = ""
			for (i = 1; i <= NF; i++) {
				n = split($i, w, " ")
				if (!n || w[1] ~ /^ffff/)
					continue
				sym = w[2]; for (j = 3; j < n; j++) sym = sym " " w[j]
				sub(/@@?[A-Z][A-Za-z0-9_.]*$/, "", sym); dso = w[n]; gsub(/^\(|\)$/, "", dso)
				s = s " " sym "@" dso
			}
			print substr(s, 2) }'
}

# The share (%) of the lines of FILE (names, as above) holding main or _start.
whole_share() {
	awk '{ n++ } / (main|_start)@/ || /^(main|_start)@/ { w++ } END { printf "%.1f\n", n ? 100 * w / n : 0 }' "$1"
}

# aliases PERF LP MODULE: perf's name and lp's name the same address of MODULE
# (both symbols of a function, lp preferring one perf does not: glibc's
# clock_gettime is __clock_gettime, __libc_start_main __libc_start_main_impl in
# its debug file; the vDSO exports each function also as __vdso_NAME).
aliases() {
	if [ "$3" = "[vdso]" ]; then
		[ "$1" = "__vdso_$2" ] || [ "$2" = "__vdso_$1" ]
		return
	fi
	local id files=$3
	id=$(readelf -n "$3" 2>/dev/null | awk '/Build ID/ { print $3 }')
	[ -z "$id" ] || [ ! -f "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] ||
		files="$files /usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
	# shellcheck disable=SC2086
	for f in $files; do readelf -Ws --wide "$f"; done 2>/dev/null |
		awk -v a="$1" -v b="$2" '{ n = $8; sub(/@.*/, "", n) } n == a { va[$2] = 1 } n == b { vb[$2] = 1 }
			END { for (v in va) if (v in vb) exit 0; exit 1 }'
}

# same_names A B: the files of names A and B (lp's, perf's) agree sample by
# sample, frame by frame, but for aliases: the test fails otherwise.
same_names() {
	[ "$(wc -l <"$1")" -eq "$(wc -l <"$2")" ] || fail "$(wc -l <"$1") samples, perf script shows $(wc -l <"$2")"
	paste -d '\t' "$1" "$2" | awk -F'\t' '{ n = split($1, l, " "); m = split($2, p, " ")
		if (n != m) { bad++; if (bad <= 3) print "sample " NR ": " n " frames, perf " m ": " $1 " | " $2 > "/dev/stderr"; next }
		for (i = 1; i <= n; i++) if (l[i] != p[i]) {
			split(l[i], x, "@"); split(p[i], y, "@")
			if (x[2] != y[2]) { bad++; print "sample " NR " frame " i ": " l[i] " | " p[i] > "/dev/stderr" }
			else pair[y[1] "\t" x[1] "\t" x[2]]++
		} }
		END { for (k in pair) print k "\t" pair[k]; exit bad > 0 }' >"$T/pairs" ||
		fail "stacks differ from perf script's (above)"
	while IFS=$'\t' read -r p l mod count; do
		echo "perf names $p what lp names $l in $mod ($count frames)"
		aliases "$p" "$l" "$mod" || fail "$p (perf) and $l (lp) are not one function of $mod"
	done <"$T/pairs"
}

@test "perf record --call-graph dwarf of cpusplit built without frame pointers: lp-cat | lp-symbolize unwinds each sample's copy: whole stacks, a()'s share within 3 points of its rounds and of perf script's, each sample's frames as perf script's" {
	require_root
	require_cmd perf
	# 3 s of CPU time, however long a loaded machine takes to give them
	record "$T/perf.data" -F 999 --call-graph dwarf -- "$WORKLOADS/cpusplit-nofp" 30 3 "$T/truth"
	run --separate-stderr -0 lp-cat "$T/perf.data"
	[ -z "$stderr" ] || fail "lp-cat said: $stderr"
	printf '%s\n' "$output" >"$T/pd.lp"
	run -0 lp-cat --check "$T/pd.lp"
	# lp-cat carries each copy (and the maps it is unwound with) as it is
	n=$(nsamples "$T/pd.lp")
	[ "$(grep -c $'^sample\t.*\turegs=[^\t]*\tustack=' "$T/pd.lp")" -eq "$n" ]
	grep -q $'^map\t[0-9]*\t[0-9]*\t0x[0-9a-f]*\t0x[0-9a-f]*\t0x[0-9a-f]*\t'"$WORKLOADS/cpusplit-nofp"$'\tbuild_id=' "$T/pd.lp"
	# through a pipe, as the man page says
	set -o pipefail
	lp-cat "$T/perf.data" | lp-symbolize 2>"$T/sym.err" >"$T/sym.lp"
	[ ! -s "$T/sym.err" ] || fail "lp-symbolize said: $(cat "$T/sym.err")"
	if grep -q -e $'\tustack=' -e $'^map\t' "$T/sym.lp"; then fail "lp-symbolize wrote copies or map records on"; fi
	[ "$(grep -c $'^sample\t.*\tunwind=dwarf' "$T/sym.lp")" -eq "$n" ]
	lp-collapse "$T/sym.lp" >"$T/pd.folded"
	perf script -i "$T/perf.data" 2>/dev/null | lp-cat | lp-collapse >"$T/script.folded"
	lp_names "$T/sym.lp" >"$T/lp.names"
	perf_names "$T/perf.data" >"$T/perf.names"
	w=$(whole_share "$T/lp.names") pw=$(whole_share "$T/perf.names")
	s=$(share_a "$T/pd.folded") p=$(share_a "$T/script.folded") truth=$(truth_a "$T/truth")
	echo "$n samples: $w% reach main or _start (perf script's: $pw%); a() $s%, perf script's $p%, cpusplit's rounds $truth%"
	[ "$n" -ge 1500 ] || fail "only $n samples"
	within "$w" 99 100 "the share of whole stacks"
	within "$s" "$(awk -v t="$truth" 'BEGIN { print t - 3 }')" "$(awk -v t="$truth" 'BEGIN { print t + 3 }')" \
		"a()'s share against cpusplit's rounds"
	within "$s" "$(awk -v t="$p" 'BEGIN { print t - 3 }')" "$(awk -v t="$p" 'BEGIN { print t + 3 }')" \
		"a()'s share against perf script's"
	same_names "$T/lp.names" "$T/perf.names"
}

@test "perf record --call-graph dwarf of a process whose binary is gone, after an exec: its frames left raw, counted as lost unwinds and said; the other process's unwound whole" {
	require_root
	require_cmd perf
	cp "$WORKLOADS/cpusplit-nofp" "$T/gone"
	record "$T/perf.data" -F 999 --call-graph dwarf -- sh -c \
		"'$WORKLOADS/cpusplit-nofp' 0.5 3 /dev/null; exec '$T/gone' 0.5 3 /dev/null"
	rm "$T/gone"
	lp-cat "$T/perf.data" >"$T/pd.lp"
	run --separate-stderr -0 lp-symbolize "$T/pd.lp"
	printf '%s\n' "$output" >"$T/sym.lp"
	echo "$stderr"
	gone=$(awk -F'\t' '$1 == "sample" && $6 == "gone"' "$T/sym.lp" | wc -l)
	cut=$(awk -F'\t' '$1 == "sample" && $6 == "gone" && /\ttruncated=1\twhy=no-file$/' "$T/sym.lp" | wc -l)
	[ "$gone" -ge 50 ] || fail "only $gone samples of the exec'd program"
	# but a tick inside execve, after its COMM: the registers are still the
	# old image's (sh's), unwound in its files
	[ "$cut" -ge $((gone - 2)) ] || fail "$cut of $gone samples of the gone binary said why=no-file"
	failed=$(awk -F'\t' '$1 == "sample" && /\ttruncated=1\twhy=/ && !/\twhy=(end-of-copy|max-frames)/' "$T/sym.lp" | wc -l)
	[ "$failed" -eq "$cut" ] || fail "$failed samples not unwound, $cut of them in the gone binary"
	[ "$(grep $'^lost\t-\tunwind\t' "$T/sym.lp")" = $'lost\t-\tunwind\t'"$failed" ]
	[[ $stderr == *"lp-symbolize: $T/gone: cannot read it: its frames are left unsymbolized"* ]]
	[[ $stderr == *"lp-symbolize: "*" copied user stacks not unwound whole: "*", $failed stopped at code it had no CFI for (last: no-file)"* ]]
	# its frames stay addresses in the file that is gone
	grep -qE $'^frame\t[0-9a-f]+\tu\t0x[0-9a-f]+\t'"$T/gone"$'\t-\t-\tbuild_id=[0-9a-f]{40}$' "$T/sym.lp"
	# the program run before the exec: every stack whole
	lp_names "$T/sym.lp" >"$T/lp.names"
	awk -F'\t' '$1 == "sample" { print $6 }' "$T/sym.lp" | paste -d ' ' - "$T/lp.names" |
		awk '$1 == "cpusplit-nofp"' >"$T/before.names"
	w=$(whole_share "$T/before.names")
	echo "before the exec: $(wc -l <"$T/before.names") samples, $w% whole"
	within "$w" 99 100 "the share of whole stacks before the exec"
}

@test "copied user stacks: a malformed copy or map record is refused with its line, exit 1; a stream without lp-symbolize passes them through" {
	seed=$LP_TOP/tests/fuzz/corpus/reader/lp-stackcopy
	tail -c +2 "$seed" >"$T/copies.lp"
	run -0 lp-cat --check "$T/copies.lp"
	# filters keep the attributes and the map records as they are
	run -0 lp-cat "$T/copies.lp"
	[ "$(grep -c $'^map\t' <<<"$output")" -eq 4 ]
	[ "$(grep -c $'\tustack=' <<<"$output")" -eq 2 ]
	head -7 "$T/copies.lp" >"$T/good.lp"
	run --separate-stderr -0 lp-symbolize "$T/good.lp"
	[[ $output == *$'\tunwind=dwarf\ttruncated=1\twhy='* ]]
	head -8 "$T/copies.lp" >"$T/bad.lp"
	run --separate-stderr -1 lp-symbolize "$T/bad.lp"
	[ "$stderr" = "lp-symbolize: $T/bad.lp:8: sample: ustack: not base64" ]
	{ head -1 "$T/copies.lp"; tail -1 "$T/copies.lp"; } >"$T/badmap.lp"
	run --separate-stderr -1 lp-symbolize "$T/badmap.lp"
	[ "$stderr" = "lp-symbolize: $T/badmap.lp:2: map: bad address range" ]
}

@test "two threads on two CPUs, forked children, an exec: in perf script's order (by time, perf's rings read in turn), each sample and stack as perf script's" {
	require_root
	require_cmd perf
	record "$T/perf.data" -F 999 -g --sample-cpu -- sh -c \
		"'$WORKLOADS/gatethreads' 2 2 >/dev/null & '$WORKLOADS/forkspin' 100 5 >/dev/null; wait"
	lp-cat "$T/perf.data" >"$T/pd.lp"
	lp_ids "$T/pd.lp" >"$T/lp.ids"
	perf_ids "$T/perf.data" >"$T/perf.ids"
	echo "$(wc -l <"$T/lp.ids") samples, of $(awk '{ print $3 }' "$T/lp.ids" | sort -u | wc -l) threads"
	same "times, pids, tids, cpus and periods" "$T/lp.ids" "$T/perf.ids"
	# the file's samples are out of time order (the rings read in turn)
	perf report -D -i "$T/perf.data" 2>/dev/null |
		awk '/PERF_RECORD_SAMPLE/ { if ($1 + 0 < last) n++; last = $1 + 0 } END { print n + 0, "out of order"; exit !n }'
	lp_stacks "$T/pd.lp" >"$T/lp.stacks"
	perf_stacks "$T/perf.data" >"$T/perf.stacks"
	same "stacks" "$T/lp.stacks" "$T/perf.stacks"
	# the children's frames in the program they were forked from, placed by
	# the maps they inherited
	children=$(awk -F'\t' '$1 == "frame" && $5 ~ /\/forkspin$/ { in_file[$2] = 1 }
		$1 == "stack" { n = split($3, f, ","); for (i = 1; i <= n; i++) if (f[i] in in_file) has[$2] = 1 }
		$1 == "sample" && $9 in has { pids[$3] = 1 } END { for (p in pids) c++; print c + 0 }' "$T/pd.lp")
	echo "$children processes with frames in forkspin"
	[ "$children" -ge 50 ]
}

@test "perf record -g of node --perf-basic-prof: its JIT code named from /tmp/perf-PID.map, sample by sample as perf script names it" {
	require_root
	require_cmd perf
	require_cmd node
	cd "$T"
	record "$T/perf.data" -F 499 -g -- node --perf-basic-prof -e '
		function lpHot() { let s = 0; for (let i = 0; i < 1e6; i++) s += i * i % 7; return s }
		const end = Date.now() + 2000; let t = 0; while (Date.now() < end) t += lpHot();'
	local pid map
	pid=$(perf script -i "$T/perf.data" -F pid 2>/dev/null | sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
	map=/tmp/perf-$pid.map
	[ -s "$map" ] || fail "node left no $map"
	lp-cat "$T/perf.data" >"$T/pd.lp"
	# Each sample's leaf: its JIT symbol's name, else "-".
	awk -F'\t' '$1 == "frame" { name[$2] = $3 == "j" && $5 == "'"$map"'" ? $6 : "-" }
		$1 == "stack" { n = split($3, f, ","); leaf[$2] = f[n] }
		$1 == "sample" { print name[leaf[$9]] }' "$T/pd.lp" >"$T/lp.leaves"
	perf script -i "$T/perf.data" -G -F ip,sym,dso 2>/dev/null |
		awk -v map="($map)" '{ if ($NF == map) { $1 = ""; $NF = ""; s = $0; gsub(/^ +| +$/, "", s); print s } else print "-" }' >"$T/perf.leaves"
	same "JIT leaves" "$T/lp.leaves" "$T/perf.leaves"
	local n hot
	n=$(wc -l <"$T/lp.leaves")
	hot=$(grep -c 'lpHot' "$T/lp.leaves")
	echo "# $n samples, $hot in lpHot's code: $(sort "$T/lp.leaves" | uniq -c | sort -rn | head -3 | tr '\n' ';')" >&3
	((2 * hot > n)) || fail "$hot of $n samples in lpHot"
	# the JIT's frames through lp-symbolize too, unchanged
	run -0 --separate-stderr sh -c "lp-symbolize <'$T/pd.lp' | lp-collapse"
	[[ $output == *"JS:"*lpHot* ]] || fail "lp-symbolize lost the JIT names"
	# its map gone (node leaves it behind), the addresses stay addresses,
	# as perf script leaves them
	rm "$map"
	lp-cat "$T/perf.data" >"$T/gone.lp"
	run -1 grep -c $'^frame\t[0-9a-f]*\tj\t' "$T/gone.lp"
}

@test "perf record -o - (a pipe's perf.data) read from stdin and from its file: the samples and stacks perf script shows" {
	require_root
	require_cmd perf
	set -o pipefail
	perf record -F 999 -g --sample-cpu -o - -- "$WORKLOADS/cpusplit" 10 0.3 2>"$T/record.err" |
		tee "$T/pipe.data" | lp-cat >"$T/stdin.lp" || fail "perf record -o - | lp-cat: $(cat "$T/record.err")"
	lp-cat "$T/pipe.data" >"$T/pipe.lp"
	same "what stdin and the file read as" "$T/stdin.lp" "$T/pipe.lp"
	n=$(nsamples "$T/pipe.lp")
	echo "$n samples"
	[ "$n" -ge 150 ] || fail "only $n samples"
	lp_ids "$T/pipe.lp" >"$T/lp.ids"
	perf_ids "$T/pipe.data" >"$T/perf.ids"
	same "times, pids, tids, cpus and periods" "$T/lp.ids" "$T/perf.ids"
	lp_stacks "$T/pipe.lp" >"$T/lp.stacks"
	perf_stacks "$T/pipe.data" >"$T/perf.stacks"
	same "stacks" "$T/lp.stacks" "$T/perf.stacks"
	# the event's name from the pipe's event update, as perf script says it
	[ "$(awk -F'\t' '$1 == "sample" { print $7 }' "$T/pipe.lp" | sort -u)" = "$(perf script -i "$T/pipe.data" -F event 2>/dev/null | awk '$1 ~ /:$/ { sub(/:$/, "", $1); print $1 }' | sort -u)" ]
}

# unz IN OUT: OUT, IN's compressed records decompressed by perfdata-zstd;
# "COMPRESSED SPLIT" (how many compressed records, how many records split
# between two) in $T/unz.
unz() {
	"$PERFDATA_ZSTD" unz "$1" "$2" >"$T/unz" || fail "perfdata-zstd unz $1 failed"
	echo "$1: $(cat "$T/unz") (compressed records, records split between two)"
}

# as_perf_script LP DATA: stream LP's samples are perf.data DATA's as perf
# script shows them, each time, id, period and stack, else the test fails.
as_perf_script() {
	lp_ids "$1" >"$T/lp.ids"
	perf_ids "$2" >"$T/perf.ids"
	same "times, pids, tids, cpus and periods" "$T/lp.ids" "$T/perf.ids"
	lp_stacks "$1" >"$T/lp.stacks"
	perf_stacks "$2" >"$T/perf.stacks"
	same "stacks" "$T/lp.stacks" "$T/perf.stacks"
}

# read_z FILE: perf record -z's FILE, one of its records split between two
# compressed records, read by lp-cat into $T/z.lp, nothing said, as its
# records decompressed apart are ($T/plain.data, read into $T/plain.lp).
read_z() {
	local packed split
	unz "$1" "$T/plain.data"
	read -r packed split <"$T/unz"
	[ "$split" -ge 1 ] || fail "no record split between two of its $packed compressed records"
	run --separate-stderr -0 lp-cat "$1"
	[ -z "$stderr" ] || fail "lp-cat said: $stderr"
	printf '%s\n' "$output" >"$T/z.lp"
	lp-cat "$T/plain.data" >"$T/plain.lp"
	same "lp-cat of the file and of its records decompressed" "$T/z.lp" "$T/plain.lp"
}

@test "perf record -z of cpusplit, its rings 2 pages (records split between compressed records): read as the same recording decompressed apart (libzstd's own calls); every sample and stack as perf script's; a()'s share within 3 points of its rounds" {
	require_root
	require_cmd perf
	record "$T/z.data" -z -m 2 -F 999 -g --sample-cpu -- "$WORKLOADS/cpusplit" 300 3 "$T/truth"
	read_z "$T/z.data"
	[ "$(cut -d' ' -f1 "$T/unz")" -ge 10 ] || fail "only $(cut -d' ' -f1 "$T/unz") compressed records"
	run -0 lp-cat --check "$T/z.lp"
	n=$(nsamples "$T/z.lp")
	[ "$n" -ge 1500 ] || fail "only $n samples"
	as_perf_script "$T/z.lp" "$T/z.data"
	lp-symbolize "$T/z.lp" >"$T/sym.lp"
	lp-collapse "$T/sym.lp" >"$T/z.folded"
	s=$(share_a "$T/z.folded") truth=$(truth_a "$T/truth")
	echo "$n samples, as perf script's; a() $s%, cpusplit's rounds $truth%"
	within "$s" "$(awk -v t="$truth" 'BEGIN { print t - 3 }')" "$(awk -v t="$truth" 'BEGIN { print t + 3 }')" \
		"a()'s share against cpusplit's rounds"
}

@test "perf record -z -o - (a pipe's, its COMPRESSED feature a record) read from stdin: the samples and stacks perf script shows" {
	require_root
	require_cmd perf
	set -o pipefail
	perf record -z -m 2 -F 999 -g --sample-cpu -o - -- "$WORKLOADS/cpusplit" 10 0.5 2>"$T/record.err" |
		tee "$T/pipe.data" | lp-cat >"$T/stdin.lp" || fail "perf record -z -o - | lp-cat: $(cat "$T/record.err")"
	grep -q 'compressed' "$T/record.err"
	n=$(nsamples "$T/stdin.lp")
	echo "$n samples"
	[ "$n" -ge 250 ] || fail "only $n samples"
	as_perf_script "$T/stdin.lp" "$T/pipe.data"
}

@test "perf record -z --call-graph dwarf of cpusplit built without frame pointers: read as the same recording decompressed apart (libzstd's own calls); lp-symbolize unwinds each copy, each sample's frames as perf script's" {
	require_root
	require_cmd perf
	# 3 s of CPU time, however long a loaded machine (or perf record
	# compressing the copies beside it) takes to give them
	record "$T/z.data" -z -F 999 --call-graph dwarf -- "$WORKLOADS/cpusplit-nofp" 30 3 "$T/truth"
	read_z "$T/z.data"
	n=$(nsamples "$T/z.lp")
	[ "$n" -ge 1500 ] || fail "only $n samples"
	[ "$(grep -c $'^sample\t.*\turegs=[^\t]*\tustack=' "$T/z.lp")" -eq "$n" ]
	lp-symbolize "$T/z.lp" 2>"$T/sym.err" >"$T/sym.lp"
	[ ! -s "$T/sym.err" ] || fail "lp-symbolize said: $(cat "$T/sym.err")"
	lp-collapse "$T/sym.lp" >"$T/z.folded"
	lp_names "$T/sym.lp" >"$T/lp.names"
	perf_names "$T/z.data" >"$T/perf.names"
	w=$(whole_share "$T/lp.names") s=$(share_a "$T/z.folded") truth=$(truth_a "$T/truth")
	echo "$n samples: $w% reach main or _start; a() $s%, cpusplit's rounds $truth%"
	within "$w" 99 100 "the share of whole stacks"
	within "$s" "$(awk -v t="$truth" 'BEGIN { print t - 3 }')" "$(awk -v t="$truth" 'BEGIN { print t + 3 }')" \
		"a()'s share against cpusplit's rounds"
	same_names "$T/lp.names" "$T/perf.names"
}

@test "samples too large for perf's ring (dwarf stacks into 1 page) are lost records: perf's LOST ones at their times, and its tally's rest" {
	require_root
	require_cmd perf
	record "$T/lost.data" -m 1 --call-graph dwarf,8192 -F 999 -- "$WORKLOADS/cpusplit" 10 0.2
	run -0 lp-cat "$T/lost.data"
	printf '%s\n' "$output" >"$T/lost.lp"
	grep $'^lost\t' "$T/lost.lp"
	# the kernel's LOST records, each as perf script shows it
	awk -F'\t' '$1 == "lost" && $2 != "-" { print $2, $3, $4 }' "$T/lost.lp" >"$T/lp.lost"
	perf script --ns --show-lost-events -i "$T/lost.data" 2>/dev/null |
		awk '/PERF_RECORD_LOST / { t = $3; sub(/:$/, "", t); sub(/\./, "", t); sub(/^0+/, "", t); print t, "ring", $NF }' >"$T/perf.lost"
	[ -s "$T/perf.lost" ] || fail "perf lost nothing"
	same "lost records" "$T/lp.lost" "$T/perf.lost"
	# in all, what perf record counted at its end (LOST_SAMPLES, Linux 6.0's
	# PERF_FORMAT_LOST), once: a LOST record says what was lost before the
	# ring's next record, the tally also what was lost after the last one
	total=$(awk -F'\t' '$1 == "lost" { n += $4 } END { print n + 0 }' "$T/lost.lp")
	tally=$(perf report -D -i "$T/lost.data" 2>/dev/null | awk -F: '/PERF_RECORD_LOST_SAMPLES/ { n += $NF } END { print n + 0 }')
	lost=$(awk '{ n += $3 } END { print n + 0 }' "$T/perf.lost")
	echo "lost: $total in lp's records; perf's: $lost in LOST records, $tally in its tally"
	[ "$total" -eq "$((tally > lost ? tally : lost))" ]
	[ "$(nsamples "$T/lost.lp")" -eq "$(perf script -i "$T/lost.data" -F time 2>/dev/null | grep -c .)" ]
}

@test "the fuzz corpus's perf.data files: their samples, events, cpus, build-ids and lost records" {
	count() {
		awk -F'\t' -v e="$2" '$1 == "sample" && (e == "" || $7 == e)' "$1" | wc -l
	}
	for f in "$SEEDS"/*; do
		run --separate-stderr -0 lp-cat "$f"
		[ -z "$stderr" ] || fail "$f: $stderr"
		printf '%s\n' "$output" >"$T/${f##*/}.lp"
		run -0 lp-cat --check "$T/${f##*/}.lp"
	done
	[ "$(count "$T/fp-cpu.lp" cpu-clock:ppp)" -eq 60 ]
	[ "$(count "$T/pipe.lp" cpu-clock:ppp)" -eq 60 ]
	[ "$(count "$T/dwarf-regs-stack.lp")" -eq 40 ]
	# --call-graph dwarf: each sample's registers and copy, after its maps
	[ "$(grep -c $'\turegs=ax:[0-9a-f]*,bx:.*,bp:[0-9a-f]*,sp:[0-9a-f]*,ip:[0-9a-f]*,.*\tustack=[A-Za-z0-9+/]*=*$' "$T/dwarf-regs-stack.lp")" -eq 40 ]
	[ "$(grep -c $'^map\t' "$T/dwarf-regs-stack.lp")" -eq 4 ]
	[ "$(grep -c $'\tustack=' "$T/fp-cpu.lp")" -eq 0 ]
	[ "$(count "$T/buildid-mmap.lp")" -eq 40 ]
	[ "$(count "$T/two-events.lp" cpu-clock)" -eq 40 ]
	[ "$(count "$T/two-events.lp" task-clock)" -eq 40 ]
	# perf record -z's (perfdata-zstd keep 12 27 of a perf record -z -m 1)
	[ "$(count "$T/zstd.lp" cpu-clock:ppp)" -eq 81 ]
	# --sample-cpu: every sample's CPU; without, none
	[ "$(awk -F'\t' '$1 == "sample" && $5 ~ /^[0-9]+$/' "$T/fp-cpu.lp" | wc -l)" -eq 60 ]
	[ "$(awk -F'\t' '$1 == "sample" && $5 != "-"' "$T/pipe.lp" | wc -l)" -eq 0 ]
	# --buildid-mmap: libc's build-id from its MMAP2; else only the binaries perf
	# kept in its build-id section
	grep -qE $'\tu\t0x[0-9a-f]+\t/usr/lib/x86_64-linux-gnu/libc.so.6\t-\t-\tbuild_id=[0-9a-f]{40}$' "$T/buildid-mmap.lp"
	grep -qE $'\tu\t0x[0-9a-f]+\t/usr/lib/x86_64-linux-gnu/libc.so.6\t-\t-$' "$T/fp-cpu.lp"
	grep -qE $'/cpusplit\t-\t-\tbuild_id=[0-9a-f]{40}$' "$T/fp-cpu.lp"
	# the ring's 201 lost samples once, not again for perf record's tally of them
	[ "$(grep $'^lost\t' "$T/lost.lp")" = $'lost\t38846287051948\tring\t201' ]
	# stacks outermost first: the recording's root, libc's __libc_start_call_main
	# (its return address into it, less one, is 0x27249), and cpusplit's main
	awk -F'\t' '$1 == "frame" && $4 == "0x27249" { libc = $2 } $1 == "frame" && $4 == "0x13cc" { main = $2 }
		$1 == "stack" && $3 ~ "^" libc "," main "," { n++ } END { exit n < 5 }' "$T/fp-cpu.lp"
}

@test "compressed records, the corpus's perf record -z file's and ones made of the corpus's files (a record split in each, COMPRESSED2 too): read as the records they decompress to" {
	unz "$SEEDS/zstd" "$T/zstd.plain"
	read -r packed split <"$T/unz"
	[ "$split" -ge 1 ] || fail "no record split between two compressed records"
	lp-cat "$SEEDS/zstd" >"$T/zstd.lp"
	lp-cat "$T/zstd.plain" >"$T/plain.lp"
	same "the perf record -z file and its records decompressed" "$T/zstd.lp" "$T/plain.lp"
	[ "$(nsamples "$T/zstd.lp")" -eq 81 ]
	for f in fp-cpu dwarf-regs-stack two-events lost; do
		lp-cat "$SEEDS/$f" >"$T/$f.lp"
		# 777 bytes a compressed record: a sample split in most, a
		# dwarf one's copy in a dozen
		"$PERFDATA_ZSTD" z "$SEEDS/$f" "$T/$f.z" 777
		"$PERFDATA_ZSTD" z "$SEEDS/$f" "$T/$f.z2" 1000 83
		for z in "$T/$f.z" "$T/$f.z2"; do
			run --separate-stderr -0 lp-cat "$z"
			[ -z "$stderr" ] || fail "$z: $stderr"
			printf '%s\n' "$output" >"$T/z.lp"
			same "$f and $z" "$T/$f.lp" "$T/z.lp"
		done
		unz "$T/$f.z" "$T/$f.unz"
		read -r packed split <"$T/unz"
		[ "$split" -ge $((packed / 2)) ]
	done
}

# records_of FILE TYPE: the offsets of FILE's data records of TYPE, one a line.
records_of() {
	python3 -c 'import struct, sys
b = open(sys.argv[1], "rb").read(); t = int(sys.argv[2])
p, size = struct.unpack_from("<QQ", b, 40); end = p + size
while p < end:
    if struct.unpack_from("<I", b, p)[0] == t: print(p)
    p += struct.unpack_from("<H", b, p + 6)[0]' "$1" "$2"
}

@test "a damaged compressed record is refused with what is wrong and where, exit 1: its zstd data, a record left without its end, COMPRESSED2's size, more than perf's rings, no COMPRESSED feature, one inside another; any byte damaged, no crash" {
	# damage FILE OFFSET BYTES...: $T/bad, FILE with BYTES (hex) at OFFSET
	damage() {
		local at=$2
		cp "$1" "$T/bad"
		shift 2
		printf "$(printf '\\x%s' "$@")" | dd of="$T/bad" bs=1 seek="$at" conv=notrunc status=none
	}
	"$PERFDATA_ZSTD" z "$SEEDS/fp-cpu" "$T/z" 777
	first=$(records_of "$T/z" 81 | sed -n 1p)
	damage "$T/z" $((first + 8)) 00 00 00 00
	run --separate-stderr -1 lp-cat "$T/bad"
	[ "$stderr" = "lp-cat: $T/bad: perfdata: the compressed record at byte $first does not decompress: Unknown frame descriptor" ]
	# the last compressed record gone: the record begun in the one before
	# has no end
	"$PERFDATA_ZSTD" drop "$T/z" "$T/cut"
	run --separate-stderr -1 lp-cat "$T/cut"
	[[ $stderr == "lp-cat: $T/cut: perfdata: the record at byte "*" of the records decompressed (from the compressed record at byte "*") runs past the end of what they decompress to" ]]
	"$PERFDATA_ZSTD" z "$SEEDS/fp-cpu" "$T/z2" 1000 83
	first=$(records_of "$T/z2" 83 | sed -n 1p)
	size=$(od -An -t u2 -j $((first + 6)) -N 2 "$T/z2" | tr -d ' ')
	damage "$T/z2" $((first + 8)) ff ff
	run --separate-stderr -1 lp-cat "$T/bad"
	[ "$stderr" = "lp-cat: $T/bad: perfdata: the compressed record at byte $first: its data run past its end ($size bytes)" ]
	# 6000 bytes a compressed record, perf's rings said 4096
	"$PERFDATA_ZSTD" z "$SEEDS/fp-cpu" "$T/big" 6000 81 4096
	first=$(records_of "$T/big" 81 | sed -n 1p)
	run --separate-stderr -1 lp-cat "$T/big"
	[ "$stderr" = "lp-cat: $T/big: perfdata: the compressed record at byte $first decompresses to more than the 4096 bytes of perf's rings (its COMPRESSED feature's mmap_len)" ]
	"$PERFDATA_ZSTD" keep "$SEEDS/zstd" "$T/nofeat" 12
	first=$(records_of "$SEEDS/zstd" 81 | sed -n 1p)
	run --separate-stderr -1 lp-cat "$T/nofeat"
	[ "$stderr" = "lp-cat: $T/nofeat: perfdata: the compressed record at byte $first: the header has no COMPRESSED feature (perf record -z's), which says what they decompress to" ]
	"$PERFDATA_ZSTD" z "$T/z" "$T/zz" 777
	run --separate-stderr -1 lp-cat "$T/zz"
	[[ $stderr == "lp-cat: $T/zz: perfdata: a compressed record at byte "*" of the records decompressed (from the compressed record at byte "*"), inside compressed records" ]]
	# perf record -z's file cut short, or any 7th byte of it made 0xff, one
	# at a time: read or refused by the reader, never a crash nor a hang
	f=$SEEDS/zstd
	size=$(stat -c %s "$f")
	for cut in 600 1000 1500 $((size - 300)) $((size - 3)); do
		head -c "$cut" "$f" >"$T/cut"
		run --separate-stderr -1 lp-cat "$T/cut"
		[[ $stderr == "lp-cat: $T/cut: perfdata: "* ]] || fail "cut at $cut: $stderr"
	done
	for ((at = 8; at < size; at += 7)); do
		damage "$f" "$at" ff
		run --separate-stderr timeout 10 lp-cat "$T/bad"
		[ "$status" -le 1 ] || fail "damaged at $at: exit $status: $stderr"
		if [ "$status" -eq 1 ]; then
			[[ $stderr == "lp-cat: $T/bad: perfdata: "* ]] || fail "damaged at $at: $stderr"
		fi
	done
}

@test "a perf.data cut short anywhere is refused with what is cut, exit 1" {
	f=$SEEDS/fp-cpu
	size=$(stat -c %s "$f")
	data=$(od -An -t u8 -j 40 -N 8 "$f" | tr -d ' ')
	for cut in 8 15 60 104 200 "$data" $((data + 3)) $((size / 2)) $((size - 2000)) $((size - 3)); do
		head -c "$cut" "$f" >"$T/cut"
		run --separate-stderr -1 lp-cat "$T/cut"
		echo "$cut: $stderr"
		[[ $stderr == "lp-cat: $T/cut: perfdata: "* ]] || fail "cut at $cut: $stderr"
		[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	done
	# a pipe's, inside a record (one cut between two reads as a shorter one)
	head -c 10003 "$SEEDS/pipe" >"$T/cut"
	run --separate-stderr -1 lp-cat "$T/cut"
	[[ $stderr == "lp-cat: $T/cut: perfdata: the record at byte "* ]]
}

@test "a damaged perf.data is refused with what is wrong, exit 1: record sizes, a callchain, sections, a byte-swapped one; any byte damaged, no crash" {
	f=$SEEDS/fp-cpu
	data=$(od -An -t u8 -j 40 -N 8 "$f" | tr -d ' ')
	# damage OFFSET BYTES...: $T/bad, f with BYTES (hex) at OFFSET
	damage() {
		local at=$1
		shift
		cp "$f" "$T/bad"
		printf "$(printf '\\x%s' "$@")" | dd of="$T/bad" bs=1 seek="$at" conv=notrunc status=none
	}
	damage $((data + 6)) 04 00
	run --separate-stderr -1 lp-cat "$T/bad"
	[ "$stderr" = "lp-cat: $T/bad: perfdata: the record at byte $data has a size less than its header" ]
	damage $((data + 6)) ff ff
	run --separate-stderr -1 lp-cat "$T/bad"
	[ "$stderr" = "lp-cat: $T/bad: perfdata: the record at byte $data runs past the end of the data section" ]
	# the first sample's callchain (after ip, pid/tid, time, cpu, period) said 2^32 long
	sample=$(python3 -c 'import struct, sys
b = open(sys.argv[1], "rb").read(); p = int(sys.argv[2])
while struct.unpack_from("<I", b, p)[0] != 9: p += struct.unpack_from("<H", b, p + 6)[0]
print(p)' "$f" "$data")
	damage $((sample + 48)) 00 00 00 00 01
	run --separate-stderr -1 lp-cat "$T/bad"
	[[ $stderr == "lp-cat: $T/bad: perfdata: the sample at byte $sample: its fields run past its end ("*" bytes)" ]]
	# the attrs section's offset, the data section's size
	damage 24 ff ff ff 7f
	run --separate-stderr -1 lp-cat "$T/bad"
	[[ $stderr == "lp-cat: $T/bad: perfdata: truncated: its attrs section "*" runs past its end "* ]]
	damage 50 ff
	run --separate-stderr -1 lp-cat "$T/bad"
	[[ $stderr == "lp-cat: $T/bad: perfdata: truncated: its data section "* ]]
	# big-endian: its magic byte-swapped, refused by name when forced
	damage 0 32 45 4c 49 46 52 45 50
	run --separate-stderr -1 lp-cat -f perfdata "$T/bad"
	[ "$stderr" = "lp-cat: $T/bad: perfdata: a big-endian perf.data: lp reads little-endian ones only" ]
	run --separate-stderr -1 lp-cat -f perfdata "$SEEDS/../reader/lp-basic"
	[[ $stderr == *": perfdata: not perf.data (it does not begin with PERFILE2)" ]]
	# every 61st byte of the header, attrs and data made 0xff, one at a time:
	# read or refused by the reader, never a crash
	size=$(stat -c %s "$f")
	for ((at = 8; at < size; at += 61)); do
		damage "$at" ff
		run --separate-stderr lp-cat "$T/bad"
		[ "$status" -le 1 ] || fail "damaged at $at: exit $status: $stderr"
		if [ "$status" -eq 1 ]; then
			[[ $stderr == "lp-cat: $T/bad: perfdata: "* ]] || fail "damaged at $at: $stderr"
		fi
	done
}

@test "fuzz corpus: the perf.data reader accepts or refuses each input cleanly, and round-trips what it accepts" {
	corpus=$SEEDS
	n=$(find "$corpus" -type f | wc -l)
	[ "$n" -ge 3 ]
	run -0 bash -c "find '$corpus' -type f -print0 | sort -z | xargs -0 '$LP_BUILD/tests/fuzz/perfdata' 2>&1 >/dev/null"
	[ "$(grep -c "^$corpus/" <<<"$output")" -eq "$n" ]
	refute_output --partial 'lp-fuzz:'
}

#!/usr/bin/env bats
# Other profilers' files read as lp streams (formats/foreign.md): real
# producers on workloads whose split is known by construction (a() one
# round of work for three of b(): 25%), their shares against the
# workload's own count and lp-record's on the same run; exact readings of
# small files; round trips that keep totals; and inputs that are no
# profile, refused.

load helpers/common
load helpers/samples
load helpers/cpusplit

# share FOLDED A B: A's share (%, one decimal) of the weight of the stacks
# holding frame A or frame B (whole frames), or "none".
share() {
	awk -v a="$2" -v b="$3" '{
		w = $NF; s = ";" substr($0, 1, length($0) - length($NF) - 1) ";"
		if (index(s, ";" a ";")) wa += w; else if (index(s, ";" b ";")) wb += w }
		END { if (wa + wb == 0) { print "none"; exit } printf "%.1f\n", 100 * wa / (wa + wb) }' "$1"
}

# rounds FILE NAME: a's share (%) of the rounds NAME's "NAME: a_rounds=R
# b_rounds=S" line in FILE counted.
rounds() {
	sed -n "s/^$2: a_rounds=\\([0-9]*\\) b_rounds=\\([0-9]*\\)\$/\\1 \\2/p" "$1" |
		awk 'NF == 2 && $1 + $2 > 0 { printf "%.1f\n", 100 * $1 / ($1 + $2) }'
}

# near A B WHAT: A within 3 points of B.
near() {
	[ -n "$2" ] || fail "$3: no figure to compare with"
	within "$1" "$(awk -v t="$2" 'BEGIN { print t - 3 }')" "$(awk -v t="$2" 'BEGIN { print t + 3 }')" "$3"
}

# The sum of a folded file's counts.
total() {
	awk '{ s += $NF } END { printf "%.0f\n", s }' "$1"
}

@test "pprof: Go's runtime/pprof of gosplit, main.a's share within 3 points of its rounds and of lp-record's on the same run" {
	require_root
	require_cmd go
	# 8 s of CPU: ~2,000 of Go's samples (its timer ticks at the kernel's
	# 250 Hz), ~4,000 of lp-record's; the shares' spread ~1 point each.
	run --separate-stderr lp-record -F 499 -o "$T/rec.lp" -- "$WORKLOADS/gosplit" "$T/go.pprof" 8
	[ "$status" -eq 0 ] || fail "lp-record: $stderr"
	echo "$stderr" >"$T/err"
	truth=$(rounds "$T/err" gosplit)
	run -0 lp-cat --check "$T/go.pprof"
	lp-cat "$T/go.pprof" >"$T/go.lp"
	n=$(nsamples "$T/go.lp")
	lp-collapse "$T/go.lp" >"$T/go.folded"
	lp-collapse "$T/rec.lp" >"$T/rec.folded"
	s=$(share "$T/go.folded" main.a main.b)
	r=$(share "$T/rec.folded" main.a main.b)
	echo "pprof: main.a $s% of $n samples; lp-record: $r%; rounds: $truth%"
	[ "$n" -ge 1000 ] || fail "only $n samples in Go's profile"
	near "$s" "$truth" "main.a's share in Go's pprof against the rounds"
	near "$s" "$r" "main.a's share in Go's pprof against lp-record's"
	# every sample is Go's "cpu" in nanoseconds, no time, the frames Go's
	# own names with their source lines
	run -0 awk -F'\t' '$1 == "sample" && ($2 != "-" || $7 != "cpu" || $8 <= 0)' "$T/go.lp"
	[ -z "$output" ] || fail "samples not as pprof says: ${output:0:300}"
	grep -q $'\tmain.spin\t.*/tests/workloads/gosplit.go:[0-9]' "$T/go.lp"
	# outermost first, as lp-record's (main.a's frame then main.spin's,
	# or the runtime's when Go preempts it at its stack check:
	# runtime.newstack, 1 sample in 2,000 of a clean-clone run)
	run -0 awk '/;main.[ab];/ && !/^runtime.main;main.main;main.[ab];(main.spin|runtime\.[a-z_]+)[ ;]/' "$T/go.folded"
	[ -z "$output" ] || fail "stacks not from runtime.main down: ${output:0:300}"
}

@test "cpuprofile: node --cpu-prof of jssplit, a's share within 3 points of its rounds; times and weights exact" {
	require_cmd node
	run --separate-stderr node --cpu-prof --cpu-prof-dir="$T/prof" --cpu-prof-interval 500 \
		"$LP_TOP/tests/workloads/jssplit.js" 3
	[ "$status" -eq 0 ] || fail "node: $stderr"
	echo "$stderr" >"$T/err"
	truth=$(rounds "$T/err" jssplit)
	prof=$(ls "$T"/prof/*.cpuprofile)
	lp-cat "$prof" >"$T/js.lp"
	n=$(nsamples "$T/js.lp")
	lp-collapse "$T/js.lp" >"$T/js.folded"
	s=$(share "$T/js.folded" a b)
	echo "cpuprofile: a $s% of $n samples; rounds: $truth%"
	[ "$n" -ge 2000 ] || fail "only $n samples"
	near "$s" "$truth" "a's share in node's profile against the rounds"
	# times are startTime plus the deltas; the weights are the gaps to the
	# next sample and to endTime: they add up to the time from the first
	# sample to endTime, to the nanosecond
	run -0 python3 - "$prof" "$T/js.lp" <<-'EOF'
	import json, sys
	p = json.load(open(sys.argv[1]))
	rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[2]) if l.startswith("sample\t")]
	assert len(rows) == len(p["samples"]), (len(rows), len(p["samples"]))
	t = p["startTime"]
	for r, d in zip(rows, p["timeDeltas"]):
	    t += d
	    assert int(r[1]) == t * 1000, (r[1], t)
	w = sum(float(r[7]) for r in rows)
	first = p["startTime"] + p["timeDeltas"][0]
	assert abs(w - (p["endTime"] - first) * 1000) < 1, (w, p["endTime"] - first)
	EOF
}

@test "aggregation: bpftrace's profile:hz:999 @[ustack] of cpusplit, a()'s share within 3 points of lp-record's on the same process" {
	require_root
	require_cmd bpftrace
	# bpftrace names a stack's frames when it prints them, from the
	# process's maps: it ends (after 5 s) while cpusplit still runs.
	"$WORKLOADS/cpusplit" 60 8 "$T/truth" &
	pid=$!
	KILL_AFTER=$pid
	lp-record -F 999 -p "$pid" -o "$T/rec.lp" &
	rec=$!
	run --separate-stderr bpftrace -e "profile:hz:999 /pid == $pid/ { @[ustack] = count(); } interval:s:5 { exit(); }"
	[ "$status" -eq 0 ] || fail "bpftrace: $stderr"
	echo "$output" >"$T/bt.txt"
	wait "$pid" || fail "cpusplit failed"
	wait "$rec" || fail "lp-record failed"
	lp-cat "$T/bt.txt" >"$T/bt.lp"
	n=$(nsamples "$T/bt.lp")
	lp-collapse "$T/bt.lp" >"$T/bt.folded"
	lp-collapse "$T/rec.lp" >"$T/rec.folded"
	s=$(share "$T/bt.folded" a b)
	r=$(share "$T/rec.folded" a b)
	truth=$(truth_a "$T/truth")
	echo "bpftrace: a $s% of $(total "$T/bt.folded") counts in $n stacks; lp-record: $r%; cpusplit: $truth%"
	[ "$(total "$T/bt.folded")" -ge 2000 ] || fail "only $(total "$T/bt.folded") samples counted"
	near "$s" "$r" "a()'s share in bpftrace's counts against lp-record's"
	near "$s" "$truth" "a()'s share in bpftrace's counts against cpusplit's own"
	# counts, not times: every sample's time is '-'
	run -0 awk -F'\t' '$1 == "sample" && $2 != "-"' "$T/bt.lp"
	[ -z "$output" ]
}

@test "aggregation: bpftrace's ustack, kstack and comm, and DTrace's ustack(): exact stacks, the kernel's above the user's" {
	printf '%s\n' 'Attaching 1 probe...' '' '' '@[' '    read+18' '    main+50' ', ' \
		'    copy_user_generic+5' '    vfs_read+120' '    do_syscall_64+93' ', cat]: 7' \
		'@[' '    0x7f0e85c45207' '    main+3' ', , sh]: 2' '@[sleepy]: 5' >"$T/bt.txt"
	run -0 lp-cat "$T/bt.txt"
	run -0 lp-collapse --kernel <<<"$output"
	[ "$output" = "$(printf '%s\n' 'cat;main;read;do_syscall_64_[k];vfs_read_[k];copy_user_generic_[k] 7' \
		'sh;main;[unknown] 2' 'sleepy 5')" ]
	printf '%s\n' 'CPU     ID                    FUNCTION:NAME' '  0  64143                        :tick-5s ' '' \
		'              libc.so.1`__nanosleep+0x15' '              libc.so.1`sleep+0x34' \
		'              a.out`main+0x20' '               37' '' \
		'              a.out`spin+0x4' '              a.out`main+0x2c' '                3' >"$T/dt.txt"
	run -0 lp-cat "$T/dt.txt"
	echo "$output" >"$T/dt.lp"
	grep -q $'^frame\t[0-9a-f]*\tu\t-\tlibc.so.1\t__nanosleep\t-$' "$T/dt.lp"
	run -0 lp-collapse "$T/dt.lp"
	[ "$output" = "$(printf '%s\n' 'main;sleep;__nanosleep 37' 'main;spin 3')" ]
}

@test "speedscope: sampled and evented profiles read exactly; evented time is the time frames were open" {
	cat >"$T/ss.json" <<-'EOF'
	{"$schema": "https://www.speedscope.app/file-format-schema.json",
	 "shared": {"frames": [{"name": "main", "file": "m.c", "line": 3}, {"name": "a"}, {"name": "b"}]},
	 "profiles": [
	  {"type": "sampled", "name": "t1", "unit": "milliseconds", "startValue": 0, "endValue": 5,
	   "samples": [[0, 1], [0, 2], [0, 1]], "weights": [1, 3, 1.5]},
	  {"type": "evented", "name": "t2", "unit": "microseconds", "startValue": 10, "endValue": 40,
	   "events": [{"type": "O", "frame": 0, "at": 10}, {"type": "O", "frame": 2, "at": 15},
	              {"type": "C", "frame": 2, "at": 25}, {"type": "C", "frame": 0, "at": 40}]}]}
	EOF
	run -0 lp-cat "$T/ss.json"
	echo "$output" >"$T/ss.lp"
	run -0 awk -F'\t' '$1 == "sample" { print $2, $7, $8, $10 }' "$T/ss.lp"
	[ "$output" = "$(printf '%s\n' '- wall 1000000 profile=t1' '- wall 3000000 profile=t1' \
		'- wall 1500000 profile=t1' '10000 wall 5000 profile=t2' '15000 wall 10000 profile=t2' \
		'25000 wall 15000 profile=t2')" ]
	run -0 lp-collapse "$T/ss.lp"
	[ "$output" = "$(printf '%s\n' 'main 20000' 'main;a 2500000' 'main;b 3010000')" ]
	grep -q $'\tmain\tm.c:3$' "$T/ss.lp"
}

@test "round trips: pprof and speedscope read back keep every stack's total exactly, and go tool pprof reads what lp wrote" {
	require_cmd go
	printf 'main;a;b 30\nmain;a;c 20\nmain;d 50\nmain 7\n' >"$T/f.folded"
	lp-collapse --format pprof "$T/f.folded" >"$T/f.pb.gz"
	lp-collapse --format speedscope "$T/f.folded" >"$T/f.json"
	run -0 lp-collapse "$T/f.pb.gz"
	[ "$output" = "$(sort "$T/f.folded")" ]
	run -0 lp-collapse "$T/f.json"
	[ "$(sed 's/^lp-collapse;//' <<<"$output" | sort)" = "$(sort "$T/f.folded")" ]
	# Go's own profile, through lp and back to pprof: the same total in
	# go tool pprof's eyes, the same stacks in lp's
	"$WORKLOADS/gosplit" "$T/go.pprof" 1 2>/dev/null
	lp-collapse "$T/go.pprof" >"$T/go.unsorted"
	sort "$T/go.unsorted" >"$T/go.folded"
	lp-collapse --format pprof "$T/go.pprof" >"$T/back.pb.gz"
	run -0 lp-collapse "$T/back.pb.gz"
	[ "$(sort <<<"$output")" = "$(cat "$T/go.folded")" ]
	GOCACHE=$T/gocache go tool pprof -raw "$T/go.pprof" >"$T/go.raw"
	GOCACHE=$T/gocache go tool pprof -raw "$T/back.pb.gz" >"$T/back.raw"
	# -raw: "Samples:", the types, then "COUNT VALUE: LOCATIONS" rows
	a=$(awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && /:/ { s += $2 } END { print s + 0 }' "$T/go.raw")
	b=$(awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && /:/ { s += $2 } END { print s + 0 }' "$T/back.raw")
	echo "go tool pprof: cpu $a ns in Go's profile, $b ns in lp's"
	[ "$a" -gt 0 ]
	[ "$a" = "$b" ]
}

@test "no times: a heatmap or a time range of a profile without them says why" {
	printf 'main;a 3\n' >"$T/f.folded"
	lp-collapse --format pprof "$T/f.folded" >"$T/f.pb.gz"
	run --separate-stderr lp-collapse --format heatmap "$T/f.pb.gz"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"needs timestamps"* ]] || fail "said: $stderr"
	run --separate-stderr lp-split -T 0-1s "$T/f.pb.gz"
	[ "$status" -eq 1 ]
	[ "$stderr" = "lp-split: $T/f.pb.gz: sample: -T, --time needs samples' times, and this input's have none (pprof)" ]
}

@test "compressed inputs: gzip and zstd (frames or members one after another, from a file or a pipe) read as what they hold" {
	require_corpus
	require_cmd zstd
	local fixtures=$LP_TOP/tests/fixtures f plain z
	zcat "$CORPUS/flamegraph/example-perf-stacks.txt.gz" >"$T/perf.txt"
	# a pprof profile as protobuf: the gzip it comes in is one layer
	zcat "$fixtures/foreign/go-cpu.pprof" >"$T/go-cpu.pb"
	for f in "$T/perf.txt" "$fixtures/stream/basic.lp" "$fixtures/foreign/bpftrace-ustack.txt" \
		"$T/go-cpu.pb" "$fixtures/foreign/node.cpuprofile" \
		"$LP_TOP/tests/fuzz/corpus/perfdata/fp-cpu"; do
		lp-cat "$f" >"$T/plain.lp"
		plain=$(grep -c '^sample' "$T/plain.lp")
		[ "$plain" -gt 0 ] || fail "$f: no samples"
		gzip -c "$f" >"$T/in.gz"
		zstd -q -c "$f" >"$T/in.zst"
		for z in "$T/in.gz" "$T/in.zst"; do
			lp-cat "$z" >"$T/z.lp"
			cmp -s "$T/plain.lp" "$T/z.lp" || fail "$f as $z: $(diff "$T/plain.lp" "$T/z.lp" | head -4)"
			lp-cat - <"$z" >"$T/z.lp"
			cmp -s "$T/plain.lp" "$T/z.lp" || fail "$f as $z on stdin: $(diff "$T/plain.lp" "$T/z.lp" | head -4)"
		done
	done
	# frames (members) one after another: the inputs one after another
	printf 'main;a 3\n' >"$T/a.folded"
	printf 'main;b 5\n' >"$T/b.folded"
	cat <(zstd -q -c "$T/a.folded") <(zstd -q -c "$T/b.folded") >"$T/ab.zst"
	cat <(gzip -c "$T/a.folded") <(gzip -c "$T/b.folded") >"$T/ab.gz"
	for z in ab.zst ab.gz; do
		run -0 lp-collapse "$T/$z"
		assert_output $'main;a 3\nmain;b 5'
	done
	# cut short, damaged, or not a profile inside: said, exit 1
	head -c 20 "$T/in.zst" >"$T/cut.zst"
	printf '\050\265\057\375garbage' >"$T/bad.zst"
	printf 'hello\n' | zstd -q >"$T/text.zst"
	for f in cut.zst:"zstd data cut short" bad.zst:"damaged zstd data ("*")" \
		text.zst:"1: not a format lp reads (it looks like text: 'hello')"; do
		run --separate-stderr lp-cat "$T/${f%%:*}"
		[ "$status" -eq 1 ] || fail "${f%%:*}: exit $status"
		[ -z "$output" ] || fail "${f%%:*}: wrote $output"
		case ${f#*:} in [0-9]*) sep=: ;; *) sep=': ' ;; esac
		# shellcheck disable=SC2053
		[[ "$stderr" == "lp-cat: $T/${f%%:*}$sep"${f#*:} ]] || fail "${f%%:*}: said '$stderr'"
	done
}

@test "not a profile: lp-cat: FILE: not a format lp reads (it looks like ...), exit 1, nothing written" {
	cp /bin/true "$T/elf"
	printf 'hello\n' | gzip >"$T/text.gz"
	printf '{"name": "x", "version": 1}\n' >"$T/other.json"
	printf '{"samples": [1, 2' >"$T/cut.json"
	printf 'main;a 3\n' >"$T/f.folded"
	lp-collapse --format pprof "$T/f.folded" >"$T/p.gz"
	head -c 40 "$T/p.gz" >"$T/cut.gz"
	gzip -dc "$T/p.gz" >"$T/p.pb"
	head -c 30 "$T/p.pb" >"$T/cut.pb"
	printf 'PK\003\004rest' >"$T/zip"
	printf 'just some words\n' >"$T/words"
	for f in elf:"not a format lp reads (it looks like an ELF file)" \
		text.gz:"1: not a format lp reads (it looks like text: 'hello')" \
		other.json:"not a format lp reads (it looks like JSON with keys name, version)" \
		cut.json:"1:17: not well-formed JSON: "* \
		cut.gz:"gzip data cut short" \
		cut.pb:"not a format lp reads (it looks like a protocol buffer)" \
		zip:"not a format lp reads (it looks like a zip archive)" \
		words:"1: not a format lp reads (it looks like text: 'just some words')"; do
		run --separate-stderr lp-cat "$T/${f%%:*}"
		[ "$status" -eq 1 ] || fail "${f%%:*}: exit $status"
		[ -z "$output" ] || fail "${f%%:*}: wrote $output"
		sep=:
		case ${f#*:} in [0-9]*) sep=: ;; *) sep=': ' ;; esac
		# shellcheck disable=SC2053
		[[ "$stderr" == "lp-cat: $T/${f%%:*}$sep"${f#*:} ]] || fail "${f%%:*}: said '$stderr'"
	done
	# forced, a document in the wrong format is said by its reader
	run --separate-stderr lp-cat -f pprof "$T/other.json"
	[ "$status" -eq 1 ]
	[ "$stderr" = "lp-cat: $T/other.json: pprof: not a well-formed protocol buffer" ]
}

@test "austin: Austin 3.3's own file (inferno's corpus): pid, tid, frames FILE:FUNCTION:LINE, microseconds made nanoseconds" {
	require_corpus
	run -0 lp-cat "$CORPUS/inferno/flamegraph/austin/flames.txt"
	echo "$output" >"$T/a.lp"
	run -0 awk -F'\t' '$1 == "sample" { print $2, $3, $4, $7, $8 }' "$T/a.lp"
	[ "$output" = "$(printf '%s\n' '- 6360 6360 wall 105000' '- 6360 6360 wall 186000')" ]
	grep -q $'\tu\t-\t-\t_find_and_load\t<frozen importlib._bootstrap>:1007$' "$T/a.lp"
	# cpu and memory modes, Austin 2's hexadecimal thread ids
	printf '%s\n' '# austin: 3.4.0' '# mode: memory' '' 'P7;T7ffb7f7fe700;app.py:main:3;app.py:grow:9 4096' >"$T/m.txt"
	run -0 lp-cat "$T/m.txt"
	run -0 awk -F'\t' '$1 == "sample" { print $3, $4, $7, $8, $10 }' <<<"$output"
	[ "$output" = "7 - memory 4096 thread=7ffb7f7fe700" ]
}

@test "recognition on the peers' corpora: speedscope's samples and the corpus' files read as what they are, the invalid refused" {
	require_corpus
	local f want
	for f in "$CORPUS"/speedscope/sample/profiles/speedscope/[0-9]*/*.json \
		"$CORPUS"/synthetic/speedscope-json/valid-*.json; do
		lp-cat "$f" >"$T/out.lp" || fail "$f: refused"
		grep -q '^sample' "$T/out.lp" || fail "$f: no samples"
	done
	for f in "$CORPUS"/speedscope/sample/profiles/linux-perf/*.txt "$CORPUS"/flamegraph/test/*.txt; do
		run --separate-stderr lp-cat "$f"
		[ "$status" -eq 0 ] || fail "$f: $stderr"
	done
	# what speedscope refuses, lp refuses, but an activeProfileIndex out of
	# range (lp shows every profile) and a name that routes speedscope to
	# another importer (lp goes by content)
	for f in "$CORPUS"/speedscope/sample/profiles/speedscope/invalid/*.json \
		"$CORPUS"/synthetic/speedscope-json/invalid-*.json; do
		case $f in *active-profile-index*|*routes-to-chrome*) continue ;; esac
		run --separate-stderr lp-cat "$f"
		[ "$status" -eq 1 ] || fail "$f: read, exit $status"
		[[ "$stderr" == "lp-cat: $f"* ]] || fail "$f: said $stderr"
	done
	# the perf script samples' counts as stackcollapse-perf.pl's
	want=$(awk '{ s += $NF } END { print s }' "$CORPUS"/flamegraph/results-pl/perf-funcab-cmd-01-collapsed.txt)
	lp-collapse "$CORPUS/flamegraph/test/perf-funcab-cmd-01.txt" >"$T/funcab.folded"
	[ "$(total "$T/funcab.folded")" = "$want" ]
}

@test "pprof: ids that are not 1..n (a producer may number its tables as it likes) found all the same" {
	# functions 900, 700, 800 and locations 50, 40, 30, out of order
	python3 - >"$T/sparse.pb" <<-'EOF'
	import sys
	def v(n):
	    out=b''
	    while True:
	        b=n&0x7f; n>>=7
	        if n: out+=bytes([b|0x80])
	        else: return out+bytes([b])
	def f(num, wire, payload):
	    key=v(num<<3|wire)
	    return key+(v(payload) if wire==0 else v(len(payload))+payload)
	strs=["","samples","count","cpu","nanoseconds","main","a","b"]
	prof=b''
	prof+=f(1,2,f(1,0,1)+f(2,0,2))
	prof+=f(1,2,f(1,0,3)+f(2,0,4))
	# functions ids 900 (main), 700 (a), 800 (b); locations ids 50,40,30
	for fid,name in ((900,5),(700,6),(800,7)):
	    prof+=f(5,2,f(1,0,fid)+f(2,0,name))
	for lid,fid in ((50,900),(40,700),(30,800)):
	    prof+=f(4,2,f(1,0,lid)+f(4,2,f(1,0,fid)))
	def packed(vals): return b''.join(v(x) for x in vals)
	prof+=f(2,2,f(1,2,packed([40,50]))+f(2,2,packed([2,2000])))
	prof+=f(2,2,f(1,2,packed([30,50]))+f(2,2,packed([3,3000])))
	for st in strs: prof+=f(6,2,st.encode())
	sys.stdout.buffer.write(prof)
	EOF
	run -0 lp-collapse "$T/sparse.pb"
	[ "$output" = "$(printf '%s\n' 'main;a 2000' 'main;b 3000')" ]
}

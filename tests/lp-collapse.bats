#!/usr/bin/env bats
# lp-collapse: usage, bad input, and what it does beyond the corpus (lp
# streams, groups, several inputs).  The byte-for-byte comparison with
# stackcollapse-perf.pl is corpus-collapse.bats.

load helpers/common
load_bats_libs

setup() {
	T=$BATS_TEST_TMPDIR
	MISC=$FIXTURES/collapse/synthetic-misc-01.txt
	MISC_OUT=$FIXTURES/collapse/synthetic-misc-01-collapsed.txt
}

# A perf script of two samples, ending with a blank line.
two_samples() {
	printf 'app 10/11 [000] 1.000001: 100 cycles: \n'
	printf '\t    401000 leaf+0x1 (/bin/app)\n\t    402000 main+0x2 (/bin/app)\n\n'
	printf 'app 10/11 [000] 1.000002: 100 cycles: \n'
	printf '\t    401000 leaf+0x1 (/bin/app)\n\t    402000 main+0x2 (/bin/app)\n\n'
}

@test "--help goes to stdout, exit 0; every option it lists is in the man page" {
	run --separate-stderr lp-collapse --help
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "$output" == usage:\ lp-collapse* ]]
	opts=$(grep -oE -- '--[a-z][a-z-]+' <<<"$output" | sort -u)
	[ "$(wc -l <<<"$opts")" -ge 20 ]
	for o in $opts; do
		grep -qF -- "${o//-/\\-}" "$LP_TOP/man/lp-collapse.1" || { echo "not in man page: $o"; false; }
	done
	run -0 lp-collapse -h
	[[ "$output" == usage:\ lp-collapse* ]]
}

@test "--version prints the version, exit 0" {
	run -0 lp-collapse --version
	[[ "$output" == *lp-collapse*0.* ]]
}

@test "usage errors exit 2 with a message on stderr and nothing on stdout" {
	run --separate-stderr lp-collapse --no-such-option "$MISC"
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	run --separate-stderr lp-collapse --format pdf "$MISC"
	[ "$status" -eq 2 ]
	[ "$stderr" = "lp-collapse: --format 'pdf': expected folded, speedscope, svg, latency, trace-event, pprof, otlp, heatmap or heatmap-tsv" ]
	[ -z "$output" ]
	run --separate-stderr lp-collapse --input-format xml "$MISC"
	[ "$status" -eq 2 ]
	[ "$stderr" = "lp-collapse: --input-format 'xml': expected auto, lp, perf, folded, aggregation, austin, pprof, cpuprofile, speedscope, chrometrace, gecko, nflx or perfdata" ]
	run --separate-stderr lp-collapse --event-filter
	[ "$status" -eq 2 ]
}

@test "--inline and --context expand inlined calls as addr2line -i -f -s -C prints them" {
	require_cmd addr2line
	cc -O2 -g -o "$T/inl" "$FIXTURES/collapse/inline.c"
	read -r start size < <(nm -S "$T/inl" | awk '$4 == "work" { print $1, $2 }')
	# the first address of work() where mix() is inlined into step() into work()
	addr=$(for ((i = 0; i < 0x$size; i++)); do printf '%x\n' $((0x$start + i)); done |
		addr2line -a -i -f -s -e "$T/inl" |
		awk '/^0x/ { if (n >= 6) { print a; exit } a = $1; n = 0; next } { n++ }')
	[ -n "$addr" ]
	addr=$(printf '%x' $((addr)))
	off=$(printf '%x' $((0x$addr - 0x$start)))
	printf 'inl 7 1.0: 3 cycles: \n\t%16s work+0x%s (%s)\n\n' "$addr" "$off" "$T/inl" >"$T/p"
	# binutils' answer, outermost first, as the script builds it
	mapfile -t a2l < <(addr2line -a "$addr" -e "$T/inl" -i -f -s -C | tail -n +2)
	want=inl wantc=inl
	for ((k = ${#a2l[@]} - 2; k >= 0; k -= 2)); do
		want="$want;${a2l[k]}"
		wantc="$wantc;${a2l[k]}:${a2l[k + 1]% (discriminator*}"
	done
	[ "$want" = "inl;work;step;mix" ]
	run -0 lp-collapse --inline "$T/p"
	[ "$output" = "$want 3" ]
	run -0 lp-collapse --inline --context --tid "$T/p"
	[ "$output" = "${wantc/inl/inl-?/7} 3" ]
	[[ "$output" == *";mix:inline.c:"[0-9]*" 3" ]]
	# an address addr2line knows nothing about: the script retries at
	# nm's address of the symbol plus the offset
	printf 'inl 7 1.0: 3 cycles: \n\t%16s work+0x%s (%s)\n\n' 1 "$off" "$T/inl" >"$T/q"
	run -0 lp-collapse --inline "$T/q"
	[ "$output" = "$want 3" ]
	# without --inline, or with --context alone: the perf frame
	run -0 lp-collapse "$T/p"
	[ "$output" = "inl;work 3" ]
	run -0 lp-collapse --context "$T/p"
	[ "$output" = "inl;work 3" ]
	# a module that is not there: the perf frame, cleaned up as usual
	sed "s|$T/inl|$T/gone|" "$T/p" >"$T/r"
	run -0 lp-collapse --inline "$T/r"
	[ "$output" = "inl;work 3" ]
}

@test "--inline asks lp-symbolize --addr2line, which answers as binutils' addr2line and nm do" {
	require_cmd addr2line
	require_cmd nm
	cc -O2 -g -o "$T/inl" "$FIXTURES/collapse/inline.c"
	read -r start < <(nm "$T/inl" | awk '$3 == "work" { print $1 }')
	# every address of work(): the answer addr2line gives, line for line
	n=$(nm -S "$T/inl" | awk '$4 == "work" { print $2 }')
	for ((i = 0; i < 0x$n; i += 3)); do
		a=$(printf '%x' $((0x$start + i)))
		printf 'a\t%s\t0x%s\n' "$T/inl" "$a" >>"$T/q"
		addr2line -a "$a" -e "$T/inl" -i -f -s -C | tail -n +2 | paste - - >"$T/one"
		{ wc -l <"$T/one"; sed 's/ (discriminator [0-9]*)$//' "$T/one"; } >>"$T/want"
	done
	# nm's value of a symbol, and a symbol and a module that are not there
	printf 's\t%s\twork\n' "$T/inl" >>"$T/q"
	printf '0x%x\n' $((0x$start)) >>"$T/want"
	printf 's\t%s\tno_such_symbol\n' "$T/inl" >>"$T/q"
	echo - >>"$T/want"
	printf 'a\t%s\t0x1000\n' "$T/gone" >>"$T/q"
	echo -1 >>"$T/want"
	run -0 --separate-stderr lp-symbolize --addr2line <"$T/q"
	[ "$output" = "$(cat "$T/want")" ]
	[ "$(grep -c $'\t' <<<"$output")" -gt "$((0x$n / 3))" ]
	# a question it cannot read: said, exit 1
	run -1 --separate-stderr lp-symbolize --addr2line <<<"x y"
	[ "$stderr" = "lp-symbolize: <stdin>: a question is 'a<TAB>MODULE<TAB>ADDR' or 's<TAB>MODULE<TAB>NAME', not 'x y'" ]
}

@test "--inline without an lp-symbolize to ask: said, exit 1, no output; without --inline none is needed" {
	mkdir "$T/bin"
	cp "$LP_BUILD/bin/lp-collapse" "$T/bin/"
	two_samples >"$T/p"
	PATH=$T/bin:/usr/bin:/bin run -1 --separate-stderr lp-collapse --inline -o "$T/out" "$T/p"
	[ -z "$output" ]
	[ ! -e "$T/out" ]
	grep -qx "lp-collapse: --inline: cannot run lp-symbolize: No such file or directory" <<<"$stderr"
	grep -qx "lp-collapse: --inline: lp-symbolize stopped answering (exit status 127)" <<<"$stderr"
	PATH=$T/bin:/usr/bin:/bin run -0 lp-collapse "$T/p"
	[ "$output" = "app;main;leaf 200" ]
}

@test "a missing input: exit 1, named, no output file created" {
	run --separate-stderr lp-collapse -o "$T/out" "$T/nope.txt"
	[ "$status" -eq 1 ]
	[[ "$stderr" == "lp-collapse: $T/nope.txt: No such file or directory" ]]
	[ ! -e "$T/out" ]
}

@test "empty input: empty output, exit 0 (file, stdin, /dev/null)" {
	: >"$T/empty"
	run --separate-stderr lp-collapse "$T/empty"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
	run -0 lp-collapse </dev/null
	[ -z "$output" ]
	run -0 lp-collapse - </dev/null
	[ -z "$output" ]
}

@test "reads stdin by default and with -, writes -o FILE" {
	run -0 lp-collapse <"$MISC"
	[ "$output" = "$(cat "$MISC_OUT")" ]
	run -0 lp-collapse - <"$MISC"
	[ "$output" = "$(cat "$MISC_OUT")" ]
	run -0 lp-collapse -o "$T/out" "$MISC"
	[ -z "$output" ]
	cmp "$T/out" "$MISC_OUT"
}

@test "no trailing newline: a folded line is read; a perf sample without its blank line is dropped, as the script does" {
	printf 'a;b 3\nc;d 4' >"$T/f"
	run -0 lp-collapse "$T/f"
	[ "$output" = "$(printf 'a;b 3\nc;d 4')" ]
	two_samples | head -c -2 >"$T/p"	# drops the final blank line and the newline
	run -0 lp-collapse "$T/p"
	[ "$output" = "app;main;leaf 100" ]
}

@test "CRLF line ends read like LF ones (perf script and folded)" {
	two_samples >"$T/lf"
	sed 's/$/\r/' "$T/lf" >"$T/crlf"
	run -0 lp-collapse "$T/lf"
	[ "$output" = "app;main;leaf 200" ]
	run -0 lp-collapse "$T/crlf"
	[ "$output" = "app;main;leaf 200" ]
	printf 'a;b 3\r\na;b 4\r\n' >"$T/f"
	run -0 lp-collapse "$T/f"
	[ "$output" = "a;b 7" ]
}

@test "NUL bytes: a perf line with one is skipped with a warning; a folded line with one is an error" {
	{ printf 'app 10/11 [000] 1.000001: 100 cycles: \n'
	  printf '\t    401000 le\0af+0x1 (/bin/app)\n\t    402000 main+0x2 (/bin/app)\n\n'; } >"$T/p"
	run --separate-stderr lp-collapse "$T/p"
	[ "$status" -eq 0 ]
	[ "$output" = "app;main 100" ]
	[[ "$stderr" == "lp-collapse: $T/p:2: skipped: NUL byte in a line" ]]
	printf 'a;b 3\na\0;b 4\n' >"$T/f"
	run --separate-stderr lp-collapse --input-format folded "$T/f"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ "$stderr" == "lp-collapse: $T/f:2: "* ]]
}

@test "a 1 MiB line: a 1 MiB frame name is kept whole (perf script and folded)" {
	big=$(head -c 1048576 /dev/zero | tr '\0' 'x')
	{ printf 'app 10 1.0: 5 cycles: \n'
	  printf '\t401000 %s+0x1 (/bin/app)\n\n' "$big"; } >"$T/p"
	run -0 lp-collapse "$T/p"
	[ "${#output}" -eq $((4 + 1048576 + 2)) ]
	[ "$output" = "app;$big 5" ]
	printf 'a;%s 7\n' "$big" >"$T/f"
	run -0 lp-collapse "$T/f"
	[ "$output" = "a;$big 7" ]
}

@test "invalid UTF-8 passes through byte for byte" {
	{ printf 'app\xff 10 1.0: 5 cycles: \n'
	  printf '\t401000 f\xc3\x28n+0x1 (/bin/app)\n\n'; } >"$T/p"
	lp-collapse "$T/p" >"$T/out"
	printf 'app\xff;f\xc3 5\n' >"$T/want"	# \x28 is '(': the name is cut there
	cmp "$T/out" "$T/want"
	printf 'a\xfe;b\x80 2\n' >"$T/f"
	lp-collapse "$T/f" >"$T/out"
	cmp "$T/out" "$T/f"
}

@test "the same file twice: every count doubles; an unfinished last sample goes on in the next file, as in the script" {
	require_corpus
	GO=$CORPUS/inferno/collapse-perf/derived/go-stacks-terminated.txt
	GO_OUT=$CORPUS/inferno/collapse-perf/results-pl/go-stacks-terminated-collapsed.txt
	run -0 lp-collapse "$GO" "$GO"
	want=$(awk '{ n = $NF; $NF = ""; printf "%s%d\n", $0, 2 * n }' "$GO_OUT")
	[ "$output" = "$want" ]
	[ "$(wc -l <<<"$output")" -eq 5 ]
	# synthetic-misc-01 ends inside a sample (compute_step, no blank line):
	# stackcollapse-perf.pl reads its inputs as one stream, so the next
	# file's first event line takes that sample over, frames and all.
	run -0 lp-collapse "$MISC" "$MISC"
	v8='V8_WorkerThread;start_thread;uv_run;RegExp:[&<>];LazyCompile:~compute /srv/app/main.js:10;v8::internal::Heap::Scavenge'
	grep -qxF "$v8 313035" <<<"$output"
	grep -qxF "$v8;compute_step 104345" <<<"$output"
	grep -qxF 'Thread;main;compute_step 14' <<<"$output"
	[ "$(wc -l <<<"$output")" -eq 10 ]
}

@test "- twice: standard input is read once, the second - is empty" {
	run -0 lp-collapse - - <"$MISC"
	[ "$output" = "$(cat "$MISC_OUT")" ]
}

@test "a malformed folded line: FILE:LINE, exit 1, no output (not even with -o)" {
	printf 'a;b 3\na;c 4\nno count here\na;d 5\n' >"$T/f"
	run --separate-stderr lp-collapse "$T/f"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ "$stderr" == "lp-collapse: $T/f:3: "* ]]
	run --separate-stderr lp-collapse -o "$T/out" "$T/f"
	[ "$status" -eq 1 ]
	[ ! -e "$T/out" ]
	# a good input before the bad one changes nothing
	printf 'x;y 1\n' >"$T/good"
	run --separate-stderr lp-collapse "$T/good" "$T/f"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
}

@test "folded input: re-aggregated and sorted bytewise, fractional counts kept" {
	printf 'b;c 1.5\na;b 2\nb;c 2.25\nB 1\n# comment\n\n' >"$T/f"
	run -0 lp-collapse "$T/f"
	[ "$output" = "$(printf 'B 1\na;b 2\nb;c 3.75')" ]
}

@test "unparseable perf lines are warned about with FILE:LINE and skipped" {
	{ printf 'app 10 1.0: 5 cycles: \n\t401000 f+0x1 (/bin/app)\nwhat is this\n\n'; } >"$T/p"
	run --separate-stderr lp-collapse "$T/p"
	[ "$status" -eq 0 ]
	[ "$output" = "app;f 5" ]
	[ "$stderr" = "lp-collapse: $T/p:3: skipped: unrecognized line" ]
}

# A hand-written stream: two groups, two events, a span.
stream() {
	printf 'lp-stream\t1\tproducer=test\n'
	printf 'frame\tf1\tu\t-\t/bin/app\tmain\t-\n'
	printf 'frame\tf2\tu\t-\t/bin/app\tslow_path\tapp.c:42\n'
	printf 'frame\tf3\tu\t-\t/bin/app\tfast_path\t-\n'
	printf 'frame\tf4\tk\t-\t[kernel.kallsyms]\tschedule\t-\n'
	printf 'frame\tf5\tu\t0x7f0000001000\t/usr/lib/libc.so.6\t-\t-\n'
	printf 'stack\ts1\tf1,f2,f4\n'
	printf 'stack\ts2\tf1,f3,f5\n'
	printf 'sample\t100\t10\t11\t0\tmy app\tcpu-clock\t10\ts1\tgroup=slow\n'
	printf 'sample\t200\t10\t12\t1\tmy app\tcpu-clock\t10\ts1\tgroup=slow\n'
	printf 'sample\t300\t10\t11\t0\tmy app\tcpu-clock\t10\ts2\tgroup=fast\n'
	printf 'sample\t400\t10\t11\t0\tmy app\tpage-faults\t1\ts2\tgroup=fast\n'
	printf 'span\t50\t450\t10\t11\thandle\t0\n'
}

@test "lp stream input: folded with every option, first event kept, --event-filter" {
	stream >"$T/s.lp"
	run -0 lp-collapse "$T/s.lp"
	[ "$output" = "$(printf 'my_app;main;fast_path;[libc.so.6] 10\nmy_app;main;slow_path;schedule 20')" ]
	run -0 lp-collapse --tid --all --addrs --srcline "$T/s.lp"
	[ "$output" = "$(printf '%s\n' \
		'my_app-10/11;main;fast_path;[libc.so.6 <7f0000001000>] 10' \
		'my_app-10/11;main;slow_path:app.c:42;schedule_[k] 10' \
		'my_app-10/12;main;slow_path:app.c:42;schedule_[k] 10')" ]
	run -0 lp-collapse --event-filter page-faults "$T/s.lp"
	[ "$output" = "my_app;main;fast_path;[libc.so.6] 1" ]
}

@test "--group keeps only the samples of that group" {
	stream >"$T/s.lp"
	run -0 lp-collapse --group slow "$T/s.lp"
	[ "$output" = "my_app;main;slow_path;schedule 20" ]
	run -0 lp-collapse -g fast --pid "$T/s.lp"
	[ "$output" = "my_app-10;main;fast_path;[libc.so.6] 10" ]
	run -0 lp-collapse --group none "$T/s.lp"
	[ -z "$output" ]
}

@test "inputs of different formats are summed; the first event seen in any of them is kept" {
	stream >"$T/s.lp"
	printf 'my_app;main;slow_path;schedule 5\n' >"$T/f"
	# cpu-clock comes first: the cycles samples of the perf script go
	run -0 lp-collapse "$T/s.lp" "$T/f" "$MISC"
	[ "$output" = "$(printf 'my_app;main;fast_path;[libc.so.6] 10\nmy_app;main;slow_path;schedule 25')" ]
	run -0 lp-collapse --event-filter cycles "$T/s.lp" "$T/f" "$MISC"
	[ "$(grep -c . <<<"$output")" -eq 10 ]
	grep -qx 'my_app;main;slow_path;schedule 5' <<<"$output"
	grep -qx 'Thread;main;compute_step 7' <<<"$output"
}

@test "a broken pipe ends lp-collapse quietly" {
	seq 200000 | sed 's/.*/f&;g 1/' >"$T/f"
	# 141: SIGPIPE re-raised, not an error message and exit 1
	run -141 bash -c "set -o pipefail; lp-collapse '$T/f' 2>'$T/err' | head -1"
	[ "$output" = "f100000;g 1" ]	# bytewise: '0' sorts before ';'
	[ ! -s "$T/err" ]
}

@test "every EXAMPLES line of the man page that needs only lp runs" {
	cd "$T"
	cp "$MISC" perf.txt
	stream >split.lp
	stream >spans.lp
	examples=$(sed -n '/^\.SH EXAMPLES/,/^\.SH /p' "$LP_TOP/man/lp-collapse.1" | grep '^lp-collapse ')
	[ "$(wc -l <<<"$examples")" -ge 4 ]
	while read -r line; do
		eval "$line" >out 2>err || { echo "failed: $line: $(cat err)"; false; }
	done <<<"$examples"
	grep -q '</svg>' flame.svg
	grep -q '"slow_path' slow.speedscope.json
}

# timed A B N: a stream where stack A (main;a) has a sample every 10 ms from
# second 0 to 5 and stack B (main;b) from 5 to 10 (N: samples per stack).
timed() {
	printf 'lp-stream\t1\tproducer=test\tevent=cpu-clock\n'
	printf 'frame\t0000000000000001\tu\t-\t/bin/app\tmain\t-\n'
	printf 'frame\t0000000000000002\tu\t-\t/bin/app\ta\t-\n'
	printf 'frame\t0000000000000003\tu\t-\t/bin/app\tb\t-\n'
	printf 'stack\t00000000000000aa\t0000000000000001,0000000000000002\n'
	printf 'stack\t00000000000000bb\t0000000000000001,0000000000000003\n'
	awk 'BEGIN { for (i = 0; i < 1000; i++)
		printf "sample\t%d\t1\t1\t0\tapp\tcpu-clock\t1\t%s\n", i * 10000000, i < 500 ? "00000000000000aa" : "00000000000000bb" }'
}

@test "--last: only the samples of the last DUR (in eighths), the same from a pipe" {
	timed >"$T/t.lp"
	# eighths of 2 s: 250 ms; the newest sample (9.99 s) is in [9.75, 10):
	# the view is [8.0, 10.0), 200 samples of b
	run -0 lp-collapse --last 2s "$T/t.lp"
	assert_output "app;main;b 200"
	# eighths of 6 s: 750 ms; the newest is in [9.75, 10.5): the view is
	# [4.5, 10.5), a's last 50 samples and all of b
	run -0 bash -c "lp-collapse --last 6s < '$T/t.lp'"
	assert_output "app;main;a 50
app;main;b 500"
	# a window longer than the input: everything
	run -0 lp-collapse --last 3600s "$T/t.lp"
	assert_output "app;main;a 500
app;main;b 500"
}

@test "--last: a sample older than the window when it comes is left out, and counted" {
	{ timed; printf 'sample\t100\t1\t1\t0\tapp\tcpu-clock\t1\t00000000000000aa\n'; } >"$T/t.lp"
	run -0 --separate-stderr lp-collapse --last 2s "$T/t.lp"
	assert_output "app;main;b 200"
	[ "$stderr" = "lp-collapse: 1 samples older than the window when they came: left out" ]
}

@test "--half-life: each sample weighs 2^-(age / half-life), age from the newest" {
	timed >"$T/t.lp"
	# b: sum over k = 0..499 of 2^(-k * 10ms / 1s); a: the same times 2^-5
	run -0 lp-collapse --half-life 1s "$T/t.lp"
	awk 'BEGIN { for (k = 0; k < 500; k++) b += 2 ^ (-k / 100); a = b * 2 ^ -5
		printf "%.6f %.6f\n", a, b }' >"$T/want"
	run -0 awk '{ printf "%s %.6f\n", $1, $2 }' <<<"$output"
	assert_output "app;main;a $(cut -d' ' -f1 "$T/want")
app;main;b $(cut -d' ' -f2 "$T/want")"
	# 1000 half-lives: rebased many times on the way, a's weight (2^-500 of
	# b's) forgotten, b's the sum of 2^-k: 2
	run -0 lp-collapse --half-life 10ms "$T/t.lp"
	assert_output "app;main;b 2"
}

@test "--every: the output is rewritten as stream time passes, whole each time" {
	timed >"$T/t.lp"
	head -506 "$T/t.lp" >"$T/first"		# the header, definitions, a (5 s)
	tail -n +507 "$T/t.lp" >"$T/rest"
	mkfifo "$T/fifo"
	lp-collapse --last 2s --every 1s -o "$T/live.folded" <"$T/fifo" &
	local pid=$!
	exec 7>"$T/fifo"	# (bats keeps 3 for itself)
	cat "$T/first" >&7
	for i in $(seq 50); do if [ -s "$T/live.folded" ]; then break; fi; sleep 0.1; done
	# written at 1 s, 2 s... 4 s of stream time: the last one before 5 s
	# holds [2.0, 4.0] of a: a, and nothing of b yet
	run -0 cat "$T/live.folded"
	assert_output --regexp '^app;main;a [0-9]+$'
	cat "$T/rest" >&7
	exec 7>&-
	wait "$pid"
	run -0 cat "$T/live.folded"
	assert_output "app;main;b 200"
	[ ! -e "$T/live.folded.tmp" ]
}

@test "--last, --half-life, --every: bad usage and untimed input" {
	run -2 lp-collapse --last 2s --format pprof /dev/null
	assert_output --partial "make folded, speedscope or svg output"
	run -2 lp-collapse --last 2s --half-life 1s /dev/null
	run -2 lp-collapse --every 1s /dev/null
	assert_output --partial "give it with -o"
	run -2 lp-collapse --last 0 /dev/null
	printf 'main;a 3\n' >"$T/f.folded"
	run -1 --separate-stderr lp-collapse --last 2s "$T/f.folded"
	[ -z "$output" ]
	[ "$stderr" = "lp-collapse: $T/f.folded:1: a window needs timestamps (folded input has none)" ]
}

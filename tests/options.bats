#!/usr/bin/env bats
# One command line across the programs: numbers are decimal, a bare duration
# is seconds in every option, one short letter means one thing, and --help
# and --version check their writes.  Values go through the real programs'
# options and are judged by what the programs then do.

load helpers/common
load helpers/producers

# bad WANT_STDERR CMD...: exit 2, exactly this one line on stderr, nothing out
# (within 10 s: a value wrongly taken starts a recording that would not end).
bad() {
	local want=$1
	shift
	run -2 --separate-stderr timeout 10 "$@"
	[ "$stderr" = "$want" ] || fail "$*: stderr '$stderr', want '$want'"
	[ -z "$output" ] || fail "$*: wrote '$output' to stdout"
}

# Folded input with N functions of distinct weights (f1 heaviest).
many_functions() {
	local i
	for ((i = 1; i <= $1; i++)); do printf 'main;f%d %d\n' "$i" $((100 - i)); done
}

@test "integers are decimal: 010 is ten, 09 nine; hex, spaces, '+' and exponents are refused" {
	many_functions 30 >"$T/many.folded"
	# --functions 010: ten rows of functions (octal would be eight)
	run -0 lp-top --once --functions 010 --stacks 0 "$T/many.folded"
	[ "$(grep -c '  f[0-9]*$' <<<"$output")" -eq 10 ] || fail "not 10 rows: $output"
	run -0 lp-top --once --functions 09 --stacks 0 "$T/many.folded"
	[ "$(grep -c '  f[0-9]*$' <<<"$output")" -eq 9 ] || fail "not 9 rows: $output"
	# lp-diff --top 010: ten report rows (strtoul base 0 read eight)
	run -0 lp-diff --report --top 010 "$T/many.folded" "$T/many.folded"
	[ "$(grep -c ' f[0-9]*$' <<<"$output")" -eq 10 ] || fail "not 10 rows: $output"
	# --max-held 09 is nine, not "must be at least 1"
	run -0 --separate-stderr lp-join --max-held 09 /dev/null /dev/null
	[ -z "$stderr" ] || fail "$stderr"
	# A power of two in octal is no longer one.
	bad "lp-record: --ring-size '010000': must be a power of two" \
		lp-record --ring-size 010000 --call-graph frob --all

	local v why
	while IFS='|' read -r v why; do
		bad "lp-join: --max-held '$v': $why" lp-join --max-held "$v" /dev/null /dev/null
	done <<-'EOF'
		0|must be at least 1
		0x10|not a decimal number
		1e3|not a number
		 5|not a number
		+5|not a number
		5 |not a number
		|not a number
		-1|too small
		99999999999999999999|too large
	EOF
	bad "lp-record: --freq '0': must be at least 1" lp-record --freq 0 --all
	bad "lp-record: --freq '100001': must be at most 100000" lp-record --freq 100001 --all
	bad "lp-record: --freq '0x63': not a decimal number" lp-record --freq 0x63 --all
	bad "lp-record: --call-graph 'dwarf,0511': must be at least 512 bytes of stack" \
		lp-record --call-graph dwarf,0511 --all
	bad "lp-record: --call-graph 'dwarf,0x200': not a decimal number" \
		lp-record --call-graph dwarf,0x200 --all
	# dwarf,0600 is 600 bytes (octal 0600 was 384, refused)
	bad "lp-record: --ring-size '5000': must be a power of two" \
		lp-record --call-graph dwarf,0600 --ring-size 5000 --all
	bad "lp-collapse: --rows '1e2': not a number" lp-collapse --rows 1e2
	bad "lp-top: --functions '-1': must be at least 0" lp-top --functions -1
}

@test "reals are decimal: no hex, inf or nan" {
	many_functions 3 >"$T/m.folded"
	local v why
	while IFS='|' read -r v why; do
		bad "lp-diff: --alpha '$v': $why" lp-diff --report --alpha "$v" "$T/m.folded" "$T/m.folded"
	done <<-'EOF'
		0x0.1|not a decimal number
		inf|not a number
		nan|not a number
		-inf|not a number
		.|not a number
		1e|not a number
		 0.5|not a number
		1e999|out of range
	EOF
	for v in 0.5 .5 5e-1 0.05E1 0.5; do
		run -0 lp-diff --report --alpha "$v" "$T/m.folded" "$T/m.folded"
	done
	bad "lp-collapse: --min-width 'nan': not a number" lp-collapse --min-width nan
	bad "lp-collapse: --min-width '0': must be positive (pixels)" lp-collapse --min-width 0
}

@test "durations: a bare number is seconds, units ns to h, in every option" {
	ab_stream 200 100000000 app >"$T/ab.lp"
	# lp-top --window 5: the last 5 s of samples, 50 of b (5 ns would be 1)
	local v
	for v in 5 5s 5000ms 5e3ms 0.083333333333m 5000000us 5000000000ns; do
		run -0 lp-top --once --window "$v" "$T/ab.lp"
		assert_line --index 0 --partial "samples 50  stacks 1"
		assert_line --index 2 " 100.00  100.00  b"
	done
	# lp-collapse --last 2: the view [19.0, 21.0) of samples up to 20.9 s
	run -0 lp-collapse --last 2 "$T/ab.lp"
	assert_output "app;main;b 20"
	run -0 lp-collapse --last 1h "$T/ab.lp"
	assert_output "app;main;a 100
app;main;b 100"
	# lp-split --threshold 1.5 is 1.5 s: the one span of 2 s is above it
	{
		ab_stream 0 1 app
		printf 'sample\t1000000000\t7\t7\t0\tapp\tcpu-clock\t1\t000000000000000a\tspan=req\tspan_start=0\tspan_end=2000000000\tspan_depth=0\n'
		printf 'sample\t3500000000\t7\t7\t0\tapp\tcpu-clock\t1\t000000000000000b\tspan=req\tspan_start=3000000000\tspan_end=4000000000\tspan_depth=0\n'
	} >"$T/j.lp"
	run -0 lp-split --threshold 1.5 --probe req --above "$T/above.lp" --below "$T/below.lp" --quiet "$T/j.lp"
	[ "$(grep -c '^sample' "$T/above.lp")" -eq 1 ]
	grep -q '^sample	1000000000	' "$T/above.lp"
	[ "$(grep -c '^sample' "$T/below.lp")" -eq 1 ]

	local why
	while IFS='|' read -r v why; do
		bad "lp-collapse: --last '$v': $why" lp-collapse --last "$v" "$T/ab.lp"
	done <<-'EOF'
		0|must be positive
		0ms|must be positive
		-1|negative
		-1s|negative
		5d|unknown unit (ns, us, ms, s, m, h; a bare number is seconds)
		2 s|unknown unit (ns, us, ms, s, m, h; a bare number is seconds)
		0x2|unknown unit (ns, us, ms, s, m, h; a bare number is seconds)
		inf|not a duration (e.g. 250us, 3ms, 1.5s, 2m; a bare number is seconds)
		nan|not a duration (e.g. 250us, 3ms, 1.5s, 2m; a bare number is seconds)
		 2s|not a duration (e.g. 250us, 3ms, 1.5s, 2m; a bare number is seconds)
		|not a duration (e.g. 250us, 3ms, 1.5s, 2m; a bare number is seconds)
		1e400|too large
		9223372037|too large
		2562048h|too large
	EOF
	# Every duration option goes through the one parser.
	bad "lp-record: --duration '0': must be positive" lp-record --duration 0 --all
	bad "lp-record: --duration 'soon': not a duration (e.g. 250us, 3ms, 1.5s, 2m; a bare number is seconds)" \
		lp-record --duration soon --all
	bad "lp-record: --min-block '-1ms': negative" lp-record --min-block -1ms --all
	bad "lp-record: --interval '0': must be positive" lp-record --interval 0 --all
	bad "lp-trace: --duration '1x': unknown unit (ns, us, ms, s, m, h; a bare number is seconds)" \
		lp-trace --duration 1x fib --pid 1
	bad "lp-trace: --min-duration 'inf': not a duration (e.g. 250us, 3ms, 1.5s, 2m; a bare number is seconds)" \
		lp-trace --min-duration inf fib --pid 1
	bad "lp-join: --max-delay '3parsecs': unknown unit (ns, us, ms, s, m, h; a bare number is seconds)" \
		lp-join --max-delay 3parsecs /dev/null /dev/null
	bad "lp-split: --window '0': must be positive" lp-split --window 0
	bad "lp-top: --interval '-5': negative" lp-top --interval -5
	bad "lp-top: --half-life '0': must be positive" lp-top --half-life 0
	bad "lp-collapse: --every 'x': not a duration (e.g. 250us, 3ms, 1.5s, 2m; a bare number is seconds)" \
		lp-collapse --every x
}

@test "lp-record and lp-trace: --duration takes 500ms and 1.5, and stops then" {
	# privileged: BPF sampling and uprobes
	require_root
	local t0 t1
	t0=$(date +%s%N)
	run -0 --separate-stderr lp-record --duration 500ms --all -o "$T/r.lp"
	t1=$(date +%s%N)
	(((t1 - t0) >= 500000000 && (t1 - t0) < 5000000000)) || fail "took $(((t1 - t0) / 1000000)) ms"
	grep -q '^sample' "$T/r.lp"
	t0=$(date +%s%N)
	run -0 --separate-stderr lp-record --duration 1.5 --mode snapshot --interval 100ms -o "$T/s.lp" -- sleep 30
	t1=$(date +%s%N)
	(((t1 - t0) >= 1400000000 && (t1 - t0) < 6000000000)) || fail "took $(((t1 - t0) / 1000000)) ms"
	t0=$(date +%s%N)
	run -0 --separate-stderr lp-trace --duration 500ms syscall:nanosleep -o "$T/t.lp" -- sleep 30
	t1=$(date +%s%N)
	(((t1 - t0) >= 500000000 && (t1 - t0) < 6000000000)) || fail "took $(((t1 - t0) / 1000000)) ms"
}

# "-X --long" pairs of every program's --help, one "PROGRAM X long" a line.
short_options() {
	local p
	for p in $(programs); do
		"$p" --help | sed -nE "s/^ +-([[:alnum:]]), --([a-z][a-z0-9-]*).*/$p \1 \2/p"
	done
}

@test "one short letter means one thing in every program" {
	short_options >"$T/pairs"
	[ "$(wc -l <"$T/pairs")" -ge 40 ] || fail "too few options parsed: $(cat "$T/pairs")"
	# a letter that names two different long options anywhere
	awk '{ if (($2 in long) && long[$2] != $3) print $2 ": --" long[$2] " (" prog[$2] ") and --" $3 " (" $1 ")"
	       long[$2] = $3; prog[$2] = $1 }' "$T/pairs" >"$T/clashes"
	[ ! -s "$T/clashes" ] || fail "$(cat "$T/clashes")"
}

@test "the short letters are the decided table's, and the old ones are gone" {
	short_options | sort >"$T/pairs"
	sort >"$T/want" <<-'EOF'
		lp-cat o output
		lp-cat f input-format
		lp-cat c check
		lp-cat h help
		lp-collapse o output
		lp-collapse f input-format
		lp-collapse g group
		lp-collapse H half-life
		lp-collapse h help
		lp-diff n normalize
		lp-diff s strip-hex
		lp-diff f input-format
		lp-diff g group
		lp-diff o output
		lp-diff h help
		lp-join o output
		lp-join e probe
		lp-join D max-delay
		lp-join v verbose
		lp-join h help
		lp-record F freq
		lp-record d duration
		lp-record o output
		lp-record p pid
		lp-record a all
		lp-record v verbose
		lp-record i interval
		lp-record h help
		lp-report o output
		lp-report g group
		lp-report f input-format
		lp-report h help
		lp-report e probe
		lp-report P percentile
		lp-report t threshold
		lp-split P percentile
		lp-split t threshold
		lp-split e probe
		lp-split T time
		lp-split w where
		lp-split g group
		lp-split O output-pattern
		lp-split l label
		lp-split o output
		lp-split L live
		lp-split W window
		lp-split r report
		lp-split q quiet
		lp-split f input-format
		lp-split h help
		lp-serve p pid
		lp-serve F freq
		lp-serve W window
		lp-serve H half-life
		lp-serve i interval
		lp-serve f input-format
		lp-serve v verbose
		lp-serve h help
		lp-push i interval
		lp-push f input-format
		lp-push v verbose
		lp-push h help
		lp-symbolize o output
		lp-symbolize h help
		lp-top W window
		lp-top H half-life
		lp-top a all
		lp-top i interval
		lp-top f input-format
		lp-top o output
		lp-top h help
		lp-trace p pid
		lp-trace d duration
		lp-trace o output
		lp-trace v verbose
		lp-trace h help
	EOF
	run -0 diff "$T/want" "$T/pairs"
	# The letters that went away are refused (bad usage), not taken.
	local cmd
	while read -r cmd; do
		run -2 --separate-stderr timeout 10 $cmd
		[[ $stderr == *"invalid option"* ]] || fail "$cmd: $stderr"
	done <<-'EOF'
		lp-record -g dwarf --all
		lp-record -n 3 --all
		lp-join -a /dev/null /dev/null
		lp-join -p req /dev/null /dev/null
		lp-split -p req /dev/null
		lp-collapse -F svg /dev/null
		lp-top -w 5s /dev/null
		lp-top -n 3 /dev/null
		lp-top -s 3 /dev/null
	EOF
	# lp-diff's -f is the input format now, --groups the old name of --group.
	printf 'main;a 1\n' >"$T/a.folded"
	bad "lp-diff: --input-format 'report': expected auto, lp, perf, folded, aggregation, austin, pprof, cpuprofile, speedscope, chrometrace, gecko, nflx or perfdata" \
		lp-diff -f report "$T/a.folded" "$T/a.folded"
	run -0 lp-diff -f folded "$T/a.folded" "$T/a.folded"
	assert_output "main;a 1 1"
	run -0 lp-diff --groups , "$T/a.folded" "$T/a.folded"
	assert_output "main;a 1 1"
}

@test "a bad value of an option with a fixed set: PROG: --NAME 'VALUE': expected ..., exit 2, in every program" {
	local p opt v want help n=0
	# -f, --input-format wherever a program reads profiles; the short
	# letter is named by its long option too
	for p in $(programs); do
		help=$("$p" --help)
		[[ $help == *"-f, --input-format"* ]] || continue
		for opt in -f --input-format; do
			bad "$p: --input-format 'xml': expected auto, lp, perf, folded, aggregation, austin, pprof, cpuprofile, speedscope, chrometrace, gecko, nflx or perfdata" "$p" "$opt" xml
		done
		n=$((n + 1))
	done
	[ "$n" -eq 8 ] || fail "-f, --input-format in $n programs, not 8"
	while IFS='|' read -r p opt v want; do
		bad "$p: $opt '$v': expected $want" "$p" "$opt" "$v"
	done <<-'EOF'
		lp-collapse|--format|pdf|folded, speedscope, svg, latency, trace-event, pprof, otlp, heatmap or heatmap-tsv
		lp-diff|--format|pdf|folded, svg or report
		lp-diff|--adjust|bonf|bh, holm or none
		lp-diff|--group|fast|BEFORE,AFTER
		lp-join|--samples-format|folded|auto, lp or perf
		lp-record|--mode|frob|cpu, off, wall or snapshot
		lp-record|--call-graph|frob|auto, fp, dwarf or dwarf,BYTES
		lp-record|--backend|frob|auto, bpf or perf
		lp-report|--group|below|A,B
		lp-split|--group|fast|NAME=FILE
		lp-split|--time|5s|FROM-TO
		lp-top|--sort|frob|self or total
		lp-trace|--returns|frob|auto, uretprobe or insn
	EOF
	# a probe of the wrong kind, in BINARY (not read before)
	bad "lp-trace: --lines 'demo.c:3': expected a function, FUNC or LIB:FUNC" \
		lp-trace --lines demo.c:3 "$BASH"
	bad "lp-trace: --vars 'main': expected a source line, FILE:LINE" lp-trace --vars main "$BASH"
}

# usage_error WANT_FIRST_LINE CMD...: exit 2, WANT_FIRST_LINE on stderr, then
# the program's usage, nothing on stdout.
usage_error() {
	local want=$1
	shift
	run -2 --separate-stderr timeout 10 "$@"
	[ "${stderr_lines[0]}" = "$want" ] || fail "$*: stderr '$stderr', want '$want' first"
	[[ ${stderr_lines[1]} == "usage: $1 "* ]] || fail "$*: no usage after '$want': '$stderr'"
	[ -z "$output" ] || fail "$*: wrote '$output' to stdout"
}

@test "bad usage: an unknown option or wrong operands, the message then the usage; options that conflict, one line" {
	local p
	for p in $(programs); do
		usage_error "$p: unrecognized option '--no-such-option'" "$p" --no-such-option
	done
	usage_error "lp-diff: expected two inputs, BEFORE and AFTER" lp-diff /dev/null
	usage_error "lp-join: expected two inputs, SAMPLES and SPANS" lp-join /dev/null
	usage_error "lp-report: expected at most one INPUT" lp-report /dev/null /dev/null
	usage_error "lp-split: expected at most one INPUT" lp-split /dev/null /dev/null
	usage_error "lp-record: name one target: -p PID, -a or -- CMD" lp-record
	usage_error "lp-trace: no probe given (or --control FIFO, to add them while tracing)" lp-trace
	usage_error "lp-trace: no target: give -p PID or -- CMD" lp-trace fib
	usage_error "lp-symbolize: unexpected argument 'x' (--addr2line reads stdin)" \
		lp-symbolize --addr2line x
	# the message says all there is to say
	bad "lp-collapse: --last and --half-life cannot be combined" \
		lp-collapse --last 1s --half-life 1s /dev/null
	bad "lp-top: --window, --half-life and --all exclude each other" lp-top -a -W 1s /dev/null
	bad "lp-record: name one target: -p PID, -a or -- CMD" lp-record -a -p 1
	bad "lp-trace: -p and a command exclude each other" lp-trace fib -p 1 -- true
	bad "lp-join: only one of SAMPLES and SPANS can be stdin" lp-join - -
}

@test "--help, -h and --version check their writes: to a full disk, exit 1 with a message" {
	[ -w /dev/full ] || fail "no /dev/full"
	local p opt
	for p in $(programs); do
		for opt in --help -h --version; do
			run -1 --separate-stderr bash -c "'$p' $opt > /dev/full"
			[ "$stderr" = "$p: write error on stdout: No space left on device" ] ||
				fail "$p $opt > /dev/full: status $status, stderr '$stderr'"
		done
		run -0 "$p" --help
	done
}

# The lines of stderr that came from libbpf.
libbpf_lines() {
	awk '/^libbpf: / { n++ } END { print n + 0 }' <<<"$stderr"
}

@test "-v: lp's own decisions without libbpf's debug output, which takes -vv (lp-trace, lp-record)" {
	# privileged: uprobes and BPF sampling
	require_root
	run -0 --separate-stderr lp-trace -v -o "$T/t.lp" fib -- "$WORKLOADS/fib" 25
	[[ $stderr == *"lp-trace: fib: $WORKLOADS/fib at 0x"* ]] || fail "no placement line: $stderr"
	[ "$(libbpf_lines)" -eq 0 ] || fail "-v: $(libbpf_lines) lines of libbpf"
	[ "${#stderr}" -lt 2000 ] || fail "-v: ${#stderr} bytes of chatter"
	run -0 --separate-stderr lp-trace -vv -o "$T/t.lp" fib -- "$WORKLOADS/fib" 25
	[[ $stderr == *"lp-trace: fib: $WORKLOADS/fib at 0x"* ]]
	[ "$(libbpf_lines)" -ge 100 ] || fail "-vv: only $(libbpf_lines) lines of libbpf"
	run -0 --separate-stderr lp-trace --verbose --verbose -o "$T/t.lp" fib -- "$WORKLOADS/fib" 25
	[ "$(libbpf_lines)" -ge 100 ]

	run -0 --separate-stderr lp-record -v --duration 200ms --all -o "$T/r.lp"
	[ "$(libbpf_lines)" -eq 0 ] || fail "-v: $(libbpf_lines) lines of libbpf"
	[[ $stderr == "lp-record: "*" samples ("* ]] || fail "$stderr"
	run -0 --separate-stderr lp-record -vv --duration 200ms --all -o "$T/r.lp"
	[ "$(libbpf_lines)" -ge 100 ] || fail "-vv: only $(libbpf_lines) lines of libbpf"
}

@test "-- CMD that cannot start: 127 and one message, before anything is loaded or written (lp-record, lp-trace)" {
	# privileged: the producers refuse to start without BPF rights first
	require_root
	local p
	printf '#!/bin/sh\necho never\n' >"$T/noexec"
	chmod 644 "$T/noexec"
	for p in $PRODUCERS; do
		run -127 --separate-stderr $(producer_args "$p") -o "$T/$p.lp" -- "$T/no-such"
		[ "$stderr" = "$p: cannot run '$T/no-such': No such file or directory" ] || fail "$p: $stderr"
		[ ! -e "$T/$p.lp" ] || fail "$p wrote $T/$p.lp for a command it could not start"
		run -127 --separate-stderr $(producer_args "$p") -o "$T/$p.lp" -- lp-no-such-command
		[ "$stderr" = "$p: cannot run 'lp-no-such-command': No such file or directory" ] || fail "$p: $stderr"
		# found, but not executable (a #! script without x)
		run -127 --separate-stderr $(producer_args "$p") -o "$T/$p.lp" -- "$T/noexec"
		[ "$stderr" = "$p: cannot run '$T/noexec': Permission denied" ] || fail "$p: $stderr"
		[ ! -e "$T/$p.lp" ] || fail "$p wrote $T/$p.lp for a command it could not start"
	done
}

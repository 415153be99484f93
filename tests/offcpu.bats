#!/usr/bin/env bats
# lp-record --mode off and --mode wall: off-CPU intervals from sched_switch,
# weighted by their nanoseconds.  Ground truth by construction: offsleep
# blocks 40 x 5 ms in long_nap() (and 100 us per short_nap()); reqblock's
# one request in twelve blocks 3 ms in wait_for_disk(), the others spin 0.3 ms.
# Privileged: they load BPF programs (root, under CI=true too).

bats_require_minimum_version 1.5.0
load helpers/common
load helpers/samples
load helpers/bpf
load_bats_libs

setup() {
	T=$BATS_TEST_TMPDIR
}

teardown() {
	for p in ${BG:-} ${BG2:-}; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
}

# started PID NAME: waits (up to 5 s) until PID runs the program NAME (the
# shell's fork has exec'd it), for probes on its functions.
started() {
	local i
	for i in $(seq 100); do
		if [[ $(readlink "/proc/$1/exe") == */"$2" ]]; then return 0; fi
		sleep 0.05
	done
	echo "$2 did not start"
	return 1
}

@test "--mode off: 40 x 5 ms blocked in long_nap weigh what the naps took (about 200 ms)" {
	require_root
	run -0 --separate-stderr lp-record --mode off -o "$T/off.lp" -- "$WORKLOADS/offsleep" 40
	[[ $stderr == *"lp-record: "*" off-CPU intervals, 0 lost (ring full), 0 lost (map full)"* ]]
	run -0 lp-cat --check "$T/off.lp"
	head -1 "$T/off.lp" | grep -q $'\tmode=off\t'
	head -1 "$T/off.lp" | grep -q $'\tevent=offcpu'
	[[ $(head -1 "$T/off.lp") != *period_ns=* ]]
	# Every sample an off-CPU interval: event offcpu, state=blocked.
	[ "$(awk -F'\t' '$1 == "sample" && ($7 != "offcpu" || $0 !~ /\tstate=blocked/)' "$T/off.lp" | wc -l)" -eq 0 ]
	# Every sleep is an interval, or counted lost when the kernel reported
	# neither its wakeup nor its switch-in (rare, see bpf/profile.bpf.c):
	# said in a lost record and in the summary, never silent.
	n=$(count "$T/off.lp" long_nap)
	unseen=$(awk -F'\t' '$1 == "lost" && $3 == "offcpu-unseen" { s += $4 } END { print s + 0 }' "$T/off.lp")
	[[ $stderr == *", $unseen lost (end unreported),"* ]]
	between "$n" $((40 - unseen)) 44
	[ "$unseen" -le 2 ]
	# The blocked time is the naps' own, as offsleep timed them, less the
	# wait for a CPU after each wakeup (runnable, not blocked: 5% here,
	# more under load): a virtual CPU oversleeps 5 ms naps by up to 15%
	# here, which lp must not hide nor add to.
	w=$(weight "$T/off.lp" long_nap)
	truth=$(sed -n 's/^offsleep: long_ns=\([0-9]*\) .*/\1/p' <<<"$stderr")
	[ -n "$truth" ] || fail "no truth line from offsleep: $stderr"
	echo "# long_nap: $w ns blocked, offsleep timed $truth ns" >&3
	between "$w" $((truth * 80 / 100)) $((truth * 101 / 100))
	between "$w" 170000000 300000000
	# Its stack: the wrapper's caller kept (libc has no frame pointers),
	# down to where the kernel chose to block, the scheduler left out.
	run -0 lp-collapse "$T/off.lp"
	assert_line --regexp ';main;long_nap;nap_ns;.*;hrtimer_nanosleep [0-9]+$'
	refute_output --regexp ';(__)?schedule[; ]'
}

@test "--min-block drops shorter blocks in the kernel, keeps the long ones whole" {
	require_root
	run -0 --separate-stderr lp-record --mode off -o "$T/all.lp" -- "$WORKLOADS/offsleep" 40 200
	n=$(count "$T/all.lp" short_nap)
	between "$n" 190 260
	run -0 --separate-stderr lp-record --mode off --min-block 1ms -o "$T/min.lp" -- \
		"$WORKLOADS/offsleep" 40 200
	head -1 "$T/min.lp" | grep -q $'\tmin_block_ns=1000000'
	# 100 us naps: gone, but those a stalled (virtual) CPU kept blocked
	# past 1 ms, really, as offsleep timed them (every sample's weight is
	# checked below)
	over=$(sed -n 's/^offsleep: .* short_over_1ms=\([0-9]*\)$/\1/p' <<<"$stderr")
	truth=$(sed -n 's/^offsleep: long_ns=\([0-9]*\) .*/\1/p' <<<"$stderr")
	[ -n "$over" ] || fail "no truth line from offsleep: $stderr"
	echo "# short naps over 1 ms: $(count "$T/min.lp" short_nap) recorded, $over timed" >&3
	[ "$(count "$T/min.lp" short_nap)" -le $((over + 2)) ]
	unseen=$(awk -F'\t' '$1 == "lost" && $3 == "offcpu-unseen" { s += $4 } END { print s + 0 }' "$T/min.lp")
	between "$(count "$T/min.lp" long_nap)" $((40 - unseen)) 44
	between "$(weight "$T/min.lp" long_nap)" $((truth * 80 / 100)) $((truth * 101 / 100))
	# No sample lighter than the bound.
	[ "$(awk -F'\t' '$1 == "sample" && $8 < 1000000' "$T/min.lp" | wc -l)" -eq 0 ]
}

@test "--mode wall + lp-trace, split at 1 ms: slow requests' time is in wait_for_disk, fast ones' not" {
	require_root
	require_cmd chrt
	# Real-time (SCHED_FIFO), so that the machine's other work does not
	# preempt it: a fast request held off the CPU longer than a slow one
	# takes would join the slow group with time that is not in
	# wait_for_disk.  Its truth is then as built whatever else runs.
	"$WORKLOADS/reqblock" 0 &
	BG=$!
	started "$BG" reqblock
	chrt -f -p 10 "$BG"
	# The recording holds the whole trace (lp-trace starts once lp-record
	# samples, and ends before it), so every span's time can be covered:
	# lp-trace's calibration takes longer on a busy machine.
	lp-record --mode wall -F 499 -p "$BG" -o "$T/w.lp" 2>"$T/rerr" &
	BG2=$!
	for _ in $(seq 100); do
		if grep -q '^sample' "$T/w.lp" 2>/dev/null; then break; fi
		sleep 0.05
	done
	# wait_for_disk first: its probe is in before any request's span starts.
	run -0 --separate-stderr lp-trace --args -p "$BG" -d 3 -o "$T/t.lp" wait_for_disk handle_request
	kill -INT "$BG2"
	reap "$BG2" 0 10 || fail "lp-record: $(cat "$T/rerr")"
	BG2=
	head -1 "$T/w.lp" | grep -q $'\tmode=wall\t'
	run -0 lp-cat --check "$T/w.lp"
	# Every sample has a state; all three occur, all in one event.
	[ "$(awk -F'\t' '$1 == "sample" && $0 !~ /\tstate=(running|runnable|blocked)/' "$T/w.lp" | wc -l)" -eq 0 ]
	[ "$(awk -F'\t' '$1 == "sample" && $7 != "wall"' "$T/w.lp" | wc -l)" -eq 0 ]
	grep -q $'\tstate=running' "$T/w.lp"
	grep -q $'\tstate=blocked' "$T/w.lp"
	# Wall time for every thread: the one thread's weights add up to the
	# time from its first sample to its last (sampling noise at 499 Hz is
	# about 2%).
	run -0 awk -F'\t' '$1 == "sample" { if (!t0) t0 = $2; t1 = $2; w += $8 }
		END { printf "%.0f %.0f\n", w, t1 - t0 }' "$T/w.lp"
	echo "weights $output ns"
	between "${output% *}" "$((${output#* } * 9 / 10))" "$((${output#* } * 11 / 10))"

	# wait_for_disk's own spans are the truth the samples are checked by;
	# the split is on handle_request's, between its populations (0.3 and
	# 3.3 ms).  A cut inside the fast mode (p90, slow ones being 1 in 12)
	# would pick its fast requests by microseconds, which a sample's cost
	# and lp's correction of it decide: they would hold more or fewer
	# samples than their time, as lp-split warns.
	lp-join -e handle_request "$T/w.lp" "$T/t.lp" > "$T/j.lp"
	run -0 --separate-stderr lp-split -t 1ms --probe handle_request --above "$T/slow.lp" \
		--below "$T/fast.lp" "$T/j.lp"
	report=$stderr
	echo "$report"
	slow=$(weight "$T/slow.lp" "")
	fast=$(weight "$T/fast.lp" "")
	slow_disk=$(weight "$T/slow.lp" wait_for_disk)
	fast_disk=$(weight "$T/fast.lp" wait_for_disk)
	echo "slow $slow_disk / $slow, fast $fast_disk / $fast"
	[ "$slow" -gt 0 ]
	[ "$fast" -gt 0 ]
	between "$(( 1000 * slow_disk / slow ))" 700 1000
	# The truth: the slow group's requests' time in wait_for_disk, their
	# calls' spans; every slow request (i % 12 == 11) among them has one.
	run -0 awk -F'\t' 'FNR == 1 { f++ }
		$1 != "span" || $3 == "-" { next }
		f == 1 && $6 == "wait_for_disk" { ws[++nw] = $2; we[nw] = $3 }
		f == 2 && $6 == "handle_request" { hs[++nh] = $2; he[nh] = $3; t += $3 - $2
			if ($8 ~ /^i=/ && substr($8, 3) % 12 == 11) slow++ }
		END {
			for (i = j = 1; i <= nh; i++) {
				while (j <= nw && ws[j] < hs[i]) j++
				for (; j <= nw && we[j] <= he[i]; j++) { d += we[j] - ws[j]; n++ }
			}
			printf "%d %d %d %d\n", d, t, n, slow }' "$T/t.lp" "$T/slow.lp"
	read -r disk span calls slow_requests <<<"$output"
	echo "truth: $disk ns of $span in wait_for_disk, $calls calls in $slow_requests slow requests"
	[ "$calls" -eq "$slow_requests" ]
	between "$(( 1000 * disk / span ))" 700 1000
	# lp's time in wait_for_disk is the truth's but for its calls' time on
	# a CPU (a syscall, a probe's trap), which is sampled, a period a
	# sample: off by 3 sd of that count at most, the count's own (its
	# running samples there), or 50 us a call's where that is more (beside
	# a CPU-bound job the calls ran 51 us each).
	period=$(head -1 "$T/w.lp" | grep -o 'period_ns=[0-9]*')
	running=$(awk -F'\t' '$1 == "frame" && $6 == "wait_for_disk" { fr[$2] = 1 }
		$1 == "stack" { n = split($3, a, ","); for (i = 1; i <= n; i++) if (a[i] in fr) st[$2] = 1 }
		$1 == "sample" && ($9 in st) && /\tstate=running/ { c++ } END { print c + 0 }' "$T/slow.lp")
	off=$(awk -v n="$calls" -v k="$running" -v p="${period#*=}" 'BEGIN { m = n * 50000 / p; if (k > m) m = k
		printf "%d\n", p * (3 * sqrt(m) + 1) }')
	echo "$running running samples in wait_for_disk"
	# For a failure's reading: the calls' time on a CPU by the truth (their
	# spans less the thread's blocked and runnable intervals inside them),
	# which the running samples estimate a period each.
	awk -F'\t' -v p="${period#*=}" 'FNR == 1 { f++ }
		f == 1 && $1 == "span" && $3 != "-" && $6 == "wait_for_disk" { s[++n] = $2; e[n] = $3; d += $3 - $2 }
		f == 2 && $1 == "sample" && $0 !~ /\tstate=running/ { t[++m] = $2; w[m] = $8 }
		END { for (i = j = 1; i <= n; i++) { while (j <= m && t[j] < s[i]) j++
				for (; j <= m && t[j] < e[i]; j++) off += w[j] }
			printf "truth on a CPU in wait_for_disk: %.1f ms, %.1f periods\n", (d - off) / 1e6, (d - off) / p }' \
		"$T/t.lp" "$T/w.lp"
	echo "lp: $slow_disk ns in wait_for_disk, $(( slow_disk - disk )) off the truth (at most $off)"
	between "$slow_disk" "$(( disk - off ))" "$(( disk + off ))"
	between "$(( 1000 * fast_disk / fast ))" 0 20
	# The samples cover the spans' time (coverage = sample ns / span ns).
	cov_slow=$(awk -F'\t' '$1 == "above" { sub(/%/, "", $10); print $10 }' <<<"$report")
	cov_fast=$(awk -F'\t' '$1 == "below" { sub(/%/, "", $10); print $10 }' <<<"$report")
	between "$cov_slow" 80 120
	between "$cov_fast" 80 120
	# The report's time by state: slow requests mostly blocked, fast not.
	blocked_slow=$(awk -F'\t' '/^# / { on = /^# sample weight by thread state/ } on && $1 == "above" { sub(/%/, "", $4); print $4 }' <<<"$report")
	blocked_fast=$(awk -F'\t' '/^# / { on = /^# sample weight by thread state/ } on && $1 == "below" { sub(/%/, "", $4); print $4 }' <<<"$report")
	between "$blocked_slow" 70 100
	between "$blocked_fast" 0 2
	# And where: the slow group's first blocking function is wait_for_disk,
	# with at least 90% of its blocked time.
	top_slow=$(awk -F'\t' '/^# / { on = /^# where each group blocked/ } on && $1 == "above" { sub(/%/, "", $4); print $2, $4; exit }' <<<"$report")
	[ "${top_slow% *}" = wait_for_disk ]
	between "${top_slow#* }" 90 100
}

@test "SIGINT mid-run in wall and off modes: exit 0, a valid stream, nothing left attached" {
	require_root
	"$WORKLOADS/reqblock" 0 &
	BG=$!
	started "$BG" reqblock
	for mode in wall off; do
		lp-record --mode "$mode" -p "$BG" -o "$T/$mode.lp" 2>"$T/err" &
		rec=$!
		# Its programs are all loaded once it writes samples (beside a
		# busy loop, 1.5 s after its start was once too early).
		for _ in $(seq 200); do
			if grep -q '^sample' "$T/$mode.lp" 2>/dev/null; then break; fi
			sleep 0.05
		done
		sleep 0.5
		progs=$(held_ids "$rec" prog_id)
		links=$(held_ids "$rec" link_id)
		# wall: sampler, exec, fork, exit, switch, wakeup, seed; off: no
		# sampler.
		[ "$(wc -w <<<"$progs")" -eq "$([ $mode = wall ] && echo 7 || echo 6)" ]
		kill -INT "$rec"
		st=0
		wait "$rec" || st=$?
		[ "$st" -eq 0 ]
		cat "$T/err"
		run -0 lp-cat --check "$T/$mode.lp"
		# The summary counts every sample the stream holds; in wall mode,
		# then each state's.
		n=$(grep -c '^sample' "$T/$mode.lp")
		if [ "$mode" = off ]; then
			grep -qE "^lp-record: $n off-CPU intervals, " "$T/err"
		else
			r=$(grep -c $'\tstate=running' "$T/$mode.lp")
			b=$(grep -c $'\tstate=blocked' "$T/$mode.lp")
			q=$(grep -c $'\tstate=runnable' "$T/$mode.lp")
			[ $((r + b + q)) -eq "$n" ]
			grep -qF "lp-record: $n samples (wall: $r running at 99 Hz, $b blocked, $q runnable; " "$T/err"
		fi
		[ "$(grep -c $'\tstate=blocked' "$T/$mode.lp")" -ge 50 ]
		[ "$(tail -c 1 "$T/$mode.lp" | od -An -c | tr -d ' ')" = '\n' ]
		all_gone "$progs" "$links"
	done
	kill -0 "$BG"
	# cpu mode still loads no scheduler program.
	lp-record -d 0.5 -p "$BG" -o "$T/cpu.lp" 2>/dev/null
	grep -q '^sample' "$T/cpu.lp"
	run -1 grep -q $'\tstate=' "$T/cpu.lp"
}

@test "threads asleep since before the recording are seen from its start, whole stacks" {
	require_root
	# 4 threads (main included) in sleeper_wait for 30 s: none wakes, none
	# switches while lp-record runs; each is 1 s of blocked time
	"$WORKLOADS/sleepers" -t 4 -p 30000000 >"$T/out" &
	BG=$!
	for i in $(seq 100); do if grep -q '^ready' "$T/out"; then break; fi; sleep 0.05; done
	grep -q '^ready' "$T/out"
	sleep 0.2
	for mode in off wall; do
		run -0 lp-record --mode "$mode" -d 1 -p "$BG" -o "$T/$mode.lp"
		run -0 awk -F'\t' '$1 == "sample" { n++; if (!($4 in tids)) t++; tids[$4] = 1
			if ($0 !~ /\tstate=blocked/) bad++ } END { print n + 0, t + 0, bad + 0 }' "$T/$mode.lp"
		assert_output "4 4 0"
		between "$(weight "$T/$mode.lp" sleeper_wait)" 3.9e9 4.2e9
		# every stack whole: from main or start_thread down to the syscall
		run -0 lp-collapse "$T/$mode.lp"
		[ "${#lines[@]}" -eq 3 ]
		[ "${lines[0]}" = "# lp-collapse: counts are nanoseconds (mode=$mode): flamegraph.pl --countname=ns" ]
		assert_line --regexp '^sleepers;([^;]*;)*main;sleeper_loop;sleeper_wait;[^ ]*clock_nanosleep;[^ ]*;hrtimer_nanosleep [0-9]+$'
		assert_line --regexp '^sleepers;([^;]*;)?start_thread;sleeper_thread;sleeper_loop;sleeper_wait;[^ ]*clock_nanosleep;[^ ]*;hrtimer_nanosleep [0-9]+$'
	done
}

@test "off and wall usage errors; lp-diff refuses to mix modes" {
	run -2 --separate-stderr lp-record --min-block 1ms -p 1
	[ "$stderr" = "lp-record: --min-block needs --mode off or wall" ]
	run -2 --separate-stderr lp-record --mode off --min-block soon -p 1
	[[ $stderr == "lp-record: --min-block 'soon': not a duration"* ]]
	printf 'lp-stream\t1\tmode=cpu\tevent=cpu-clock\tperiod_ns=1000\n' > "$T/c.lp"
	printf 'lp-stream\t1\tmode=off\tevent=offcpu\n' > "$T/o.lp"
	run -1 --separate-stderr lp-diff "$T/c.lp" "$T/o.lp"
	[[ $stderr == *"different modes (cpu vs off)"* ]]
}

@test "lp-split's report: each group's wall time by thread state" {
	{
		printf 'lp-stream\t1\tmode=wall\tevent=wall\n'
		# The slow span [0, 10000): 1000 running, 8000 blocked, 1000
		# runnable; the fast one [20000, 21000): 1000 running; one
		# sample outside, without a state.
		printf 'sample\t100\t1\t1\t0\tx\twall\t1000\t-\tstate=running\n'
		printf 'sample\t1100\t1\t1\t0\tx\twall\t8000\t-\tstate=blocked\n'
		printf 'sample\t9100\t1\t1\t0\tx\twall\t1000\t-\tstate=runnable\n'
		printf 'sample\t20100\t1\t1\t0\tx\twall\t1000\t-\tstate=running\n'
		printf 'sample\t30100\t1\t1\t0\tx\twall\t500\t-\n'
	} > "$T/s.lp"
	{
		printf 'lp-stream\t1\tmode=trace\n'
		printf 'span\t0\t10000\t1\t1\treq\t0\n'
		printf 'span\t20000\t21000\t1\t1\treq\t0\n'
	} > "$T/p.lp"
	lp-join "$T/s.lp" "$T/p.lp" > "$T/j.lp"
	run -0 --separate-stderr lp-split -t 5us --probe req -O "$T/g-%s.lp" "$T/j.lp"
	# (The report's tables, not the warnings after them: two spans are
	# too few to compare, and lp-split says so.)
	[ "$(sed -n '/^# sample weight by thread state$/,$p' <<<"$stderr" | sed '/^lp-split: warning: /d')" = "# sample weight by thread state
group	running	runnable	blocked
below	100.0%	0.0%	0.0%
above	10.0%	10.0%	80.0%
# where each group blocked (top 3 functions by blocked weight)
group	function	blocked_ns	share
above	[unknown]	8000	100.0%" ]
	# No state=, no such table.
	sed 's/\tstate=[a-z]*//' "$T/s.lp" > "$T/s2.lp"
	lp-join "$T/s2.lp" "$T/p.lp" > "$T/j2.lp"
	run -0 --separate-stderr lp-split -t 5us --probe req -O "$T/h-%s.lp" "$T/j2.lp"
	[[ $stderr != *"thread state"* ]]
}

@test "lp-split's report: where each group blocked, the top 3 functions by blocked weight" {
	{
		printf 'lp-stream\t1\tmode=wall\tevent=wall\n'
		printf 'frame\t0000000000000001\tu\t-\t/bin/app\tmain\t-\n'
		printf 'frame\t0000000000000002\tu\t-\t/bin/app\tread_disk\t-\n'
		printf 'frame\t0000000000000003\tu\t-\t/bin/app\ttake_lock\t-\n'
		printf 'frame\t0000000000000004\tu\t-\t/bin/app\tlog_flush\t-\n'
		printf 'frame\t0000000000000005\tu\t-\t/usr/lib/x86_64-linux-gnu/libc.so.6\t__GI___nanosleep\t-\n'
		printf 'frame\t0000000000000006\tu\t-\t/usr/lib/x86_64-linux-gnu/libc.so.6\t__GI___poll\t-\n'
		printf 'frame\t0000000000000007\tk\t-\t[kernel.kallsyms]\tschedule\t-\n'
		# Deepest frame outside libc: read_disk, take_lock, log_flush;
		# only libc in user space: its deepest frame; only the kernel:
		# the leaf.
		printf 'stack\t00000000000000a1\t0000000000000001,0000000000000002,0000000000000005,0000000000000007\n'
		printf 'stack\t00000000000000a2\t0000000000000001,0000000000000003,0000000000000005\n'
		printf 'stack\t00000000000000a3\t0000000000000004,0000000000000006,0000000000000007\n'
		printf 'stack\t00000000000000a4\t0000000000000006,0000000000000007\n'
		printf 'stack\t00000000000000a5\t0000000000000007\n'
		# The slow span [0, 100000): 10000 running, 90000 blocked:
		# 50000 in read_disk, 20000 take_lock, 10000 log_flush, 5000
		# in __GI___poll and 5000 in schedule (both below the top 3).
		printf 'sample\t100\t1\t1\t0\tx\twall\t10000\t-\tstate=running\n'
		printf 'sample\t10100\t1\t1\t0\tx\twall\t30000\t00000000000000a1\tstate=blocked\n'
		printf 'sample\t40100\t1\t1\t0\tx\twall\t20000\t00000000000000a2\tstate=blocked\n'
		printf 'sample\t60100\t1\t1\t0\tx\twall\t10000\t00000000000000a3\tstate=blocked\n'
		printf 'sample\t70100\t1\t1\t0\tx\twall\t5000\t00000000000000a4\tstate=blocked\n'
		printf 'sample\t75100\t1\t1\t0\tx\twall\t5000\t00000000000000a5\tstate=blocked\n'
		printf 'sample\t80100\t1\t1\t0\tx\twall\t20000\t00000000000000a1\tstate=blocked\n'
		# The fast span [200000, 210000): 8000 running, 1000 blocked in
		# each fallback: a tie, broken by name.
		printf 'sample\t200100\t1\t1\t0\tx\twall\t8000\t-\tstate=running\n'
		printf 'sample\t208100\t1\t1\t0\tx\twall\t1000\t00000000000000a5\tstate=blocked\n'
		printf 'sample\t209100\t1\t1\t0\tx\twall\t1000\t00000000000000a4\tstate=blocked\n'
	} > "$T/s.lp"
	{
		printf 'lp-stream\t1\tmode=trace\n'
		printf 'span\t0\t100000\t1\t1\treq\t0\n'
		printf 'span\t200000\t210000\t1\t1\treq\t0\n'
	} > "$T/p.lp"
	lp-join "$T/s.lp" "$T/p.lp" > "$T/j.lp"
	expected="# sample weight by thread state
group	running	runnable	blocked
below	80.0%	0.0%	20.0%
above	10.0%	0.0%	90.0%
# where each group blocked (top 3 functions by blocked weight)
group	function	blocked_ns	share
below	__GI___poll	1000	50.0%
below	schedule	1000	50.0%
above	read_disk	50000	55.6%
above	take_lock	20000	22.2%
above	log_flush	10000	11.1%"
	run -0 --separate-stderr lp-split -t 50us --probe req -O "$T/g-%s.lp" "$T/j.lp"
	[ "$(sed -n '/^# sample weight by thread state$/,$p' <<<"$stderr" | sed '/^lp-split: warning: /d')" = "$expected" ]
	# The same with --report FILE, stderr quiet; exact mode (a percentile
	# cut reads the input twice) finds the same.
	run -0 --separate-stderr lp-split -P 50 --probe req --report "$T/r.txt" -O "$T/h-%s.lp" "$T/j.lp"
	[ -z "$(sed '/^lp-split: warning: group [a-z]* has 1 spans and [0-9]* samples: too few/d' <<<"$stderr")" ]
	[ "$(sed -n '/^# sample weight by thread state$/,$p' "$T/r.txt")" = "$expected" ]
}

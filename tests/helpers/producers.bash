# What lp-record's and lp-trace's suites share: how a producer ends under
# signals, and a process given a pid the producer followed once.

# Starts a command in the background, writes its pid to file $1 and, once
# it has ended, how to file $2: "exit N" or "signal N".  A shell's status
# cannot tell an exit(130) from death by SIGINT.
start_reporting_end() {
	python3 -c '
import os, subprocess, sys
p = subprocess.Popen(sys.argv[3:])
with open(sys.argv[1] + ".new", "w") as f:
    f.write("%d\n" % p.pid)
os.rename(sys.argv[1] + ".new", sys.argv[1])
r = p.wait()
try:
    with open(sys.argv[2] + ".new", "w") as f:
        f.write("signal %d\n" % -r if r < 0 else "exit %d\n" % r)
    os.rename(sys.argv[2] + ".new", sys.argv[2])
except OSError:
    pass  # a failed test has cleaned up already
' "$@" &
}

# Waits up to 10 s for a line matching $1 in file $2.
wait_line() {
	for _ in $(seq 200); do
		if grep -q -- "$1" "$2" 2>/dev/null; then return 0; fi
		sleep 0.05
	done
	echo "no '$1' in $2 after 10 s:"; cat "$2"
	return 1
}

# Waits (up to $2 s, 10 by default) for file $1 to exist.
wait_file() {
	local i
	for i in $(seq $((${2:-10} * 20))); do
		if [ -e "$1" ]; then return 0; fi
		sleep 0.05
	done
	echo "no $1 after ${2:-10} s"
	return 1
}

# Waits (up to 20 s) until process $1 has file $2 open: a producer opens
# its output once its probes are in (loading them: about a second here).
wait_opened() {
	local i f
	for i in $(seq 400); do
		for f in /proc/"$1"/fd/*; do
			if [ "$(readlink "$f" 2>/dev/null)" = "$2" ]; then return 0; fi
		done
		sleep 0.05
	done
	echo "process $1 never opened $2"
	return 1
}

# Waits (up to 20 s) until process $1 sleeps writing to a full pipe.
wait_blocked_in_write() {
	local i
	for i in $(seq 400); do
		case $(cat /proc/"$1"/wchan 2>/dev/null) in *pipe_write) return 0 ;; esac
		sleep 0.05
	done
	echo "process $1 never blocked writing to its pipe: $(cat /proc/"$1"/wchan 2>/dev/null)"
	return 1
}

# Waits (up to 5 s) until signal $2 (a number) is no longer pending for
# process $1: it has been delivered, its handler has run.
wait_delivered() {
	local i bit=$((1 << ($2 - 1))) p s
	for i in $(seq 100); do
		[ -e /proc/"$1"/status ] || { echo "process $1 has ended"; return 1; }
		p=$(awk '$1 == "SigPnd:" { print $2 }' /proc/"$1"/status)
		s=$(awk '$1 == "ShdPnd:" { print $2 }' /proc/"$1"/status)
		if [ $((0x$p & bit)) -eq 0 ] && [ $((0x$s & bit)) -eq 0 ]; then return 0; fi
		sleep 0.05
	done
	echo "signal $2 still pending for $1"
	return 1
}

# Starts a command in the background with pid $1, free now: the kernel
# gives the next fork ns_last_pid + 1, unless another process on the
# machine forked in between (then again, up to 50 times).  Sets BG_PID.
start_with_pid() {
	local want=$1 i
	shift
	for i in $(seq 50); do
		echo $((want - 1)) > /proc/sys/kernel/ns_last_pid
		"$@" &
		BG_PID=$!
		if [ "$BG_PID" -eq "$want" ]; then return 0; fi
		kill "$BG_PID" 2>/dev/null
		wait "$BG_PID" 2>/dev/null
	done
	echo "no fork got pid $want in 50 tries"
	return 1
}

# The second-SIGINT check of both producers.  Producer $1 writes to a pipe
# whose reader $2 is stopped here, so the producer blocks in write with
# everything attached and a first SIGINT cannot end it; start_reporting_end
# writes its end to file $3.  It holds $5 ids of kind $4 (prog_id or
# link_id).  The first SIGINT leaves it running; the second kills it by
# SIGINT, its exit begun within 1 s, and every program and link it held
# is gone.
second_sigint_kills() {
	local pid=$1 reader=$2 end=$3 kind=$4 want=$5 progs links t0 ms
	kill -STOP "$reader"
	wait_blocked_in_write "$pid"
	progs=$(held_ids "$pid" prog_id)
	links=$(held_ids "$pid" link_id)
	if [ "$kind" = prog_id ]; then
		[ "$(wc -w <<<"$progs")" -eq "$want" ] || { echo "$(wc -w <<<"$progs") programs held, want $want"; false; }
	else
		[ "$(wc -w <<<"$links")" -eq "$want" ] || { echo "$(wc -w <<<"$links") links held, want $want"; false; }
	fi
	kill -INT "$pid"
	wait_delivered "$pid" 2
	# Still there, still writing: the first SIGINT only asked it to stop.
	sleep 0.3
	kill -0 "$pid"
	[ ! -e "$end" ] || { echo "ended at the first SIGINT: $(cat "$end")"; false; }
	t0=$(date +%s%N)
	kill -INT "$pid"
	exiting_ms "$pid" "$t0"
	ms=$EXITING_MS
	wait_file "$end" 10
	echo "exiting $ms ms after the second SIGINT, ended $(cat "$end") after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
	[ "$(cat "$end")" = "signal 2" ] || { echo "ended $(cat "$end"), want signal 2"; false; }
	[ "$ms" -lt 1000 ] || { echo "began to exit $ms ms after the second SIGINT"; false; }
	all_gone "$progs" "$links"
}

# Sets EXITING_MS: milliseconds from $2 (date +%s%N) until process $1 has
# begun to exit (PF_EXITING, 0x4, in its stat's flags) or is gone, looked
# at every 10 ms for up to 5 s.  What comes after, until it is reaped, is the kernel's:
# closing its files releases its BPF links, each uprobe's removal waiting
# for RCU grace periods, seconds on a loaded machine (2.3 s seen here
# beside a VM and a build, 115-220 ms quiet).
exiting_ms() {
	local pid=$1 t0=$2 i stat f
	for i in $(seq 500); do
		stat=$(cat /proc/"$pid"/stat 2>/dev/null) || break
		read -r -a f <<<"${stat##*) }"
		if (((f[6] & 4) != 0)); then break; fi
		sleep 0.01
	done
	EXITING_MS=$((($(date +%s%N) - t0) / 1000000))
}

# The two producers, each as a command line that loads little and
# calibrates nothing, for the checks of the shell they share
# (lib/capture/producer.h): its ends, statuses and messages are the same
# in both.
PRODUCERS=${PRODUCERS:-lp-record lp-trace}
producer_args() {
	case $1 in
	lp-record) echo "lp-record --calibrate 0" ;;
	lp-trace) echo "lp-trace --calibrate 0 syscall:getpid" ;;
	*) echo "producer_args: no producer '$1'" >&2; return 1 ;;
	esac
}

# closed_socket_end CMD...: runs CMD with its stdout one end of a Unix
# socket pair; once CMD has written (its header) and then nothing for
# 0.5 s, reads all it wrote and closes the other end, so that CMD's end
# shows POLLHUP alone (unread data would make it an error, POLLERR).
# Prints how CMD ended ("exit N", "signal N" or "running" after 10 s),
# the seconds from the close to its end, then its stderr.
closed_socket_end() {
	python3 -c '
import select, socket, subprocess, sys, time
a, b = socket.socketpair()
p = subprocess.Popen(sys.argv[1:], stdout=a, stderr=subprocess.PIPE)
a.close()
got = 0
while True:
    r, _, _ = select.select([b], [], [], 20 if not got else 0.5)
    if not r:
        break
    n = len(b.recv(65536))
    if not n:
        break
    got += n
if not got:
    print("nothing written")
b.close()
t0 = time.monotonic()
try:
    r = p.wait(timeout=10)
except subprocess.TimeoutExpired:
    p.kill()
    p.wait()
    print("running")
    sys.exit(0)
print("signal %d" % -r if r < 0 else "exit %d" % r, "%.1f" % (time.monotonic() - t0))
sys.stdout.write(p.stderr.read().decode())
' "$@"
}

# Waits (up to 10 s) until the producer writing file $1 has written its
# cost records (flushed within 25 ms): lp-record once its calibration is
# over (300 ms) and it samples, lp-trace once its probes are attached.
wait_recording() {
	local i
	for i in $(seq 200); do
		if grep -q '^cost' "$1"; then return 0; fi
		sleep 0.05
	done
	echo "no cost record in $1 after 10 s"
	return 1
}

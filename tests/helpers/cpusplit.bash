# The truth of tests/workloads/cpusplit (a() 25%, b() 75% of its CPU time)
# and the counts its recordings are checked by (kernel-core.bats,
# lp-record-user.bats and lp-diff.bats).

# Share (percent, one decimal) of a() among the samples in a() or b(), from
# lp-collapse's folded output (a cpu recording's counts are its samples).
share_a() {
	awk '{ w = $NF; s = " " $0 " ";
	       if (s ~ /;a;|;a /) a += w; else if (s ~ /;b;|;b /) b += w }
	     END { if (a + b == 0) { print "none"; exit } printf "%.1f\n", 100 * a / (a + b) }' "$1"
}

# Within +-3 points of 25.
near_25() {
	awk -v s="$1" 'BEGIN { exit !(s != "none" && s >= 22 && s <= 28) }'
}

# truth_a FILE: a()'s share (%) of the rounds of its loop cpusplit ran in
# a() and b() (its third argument's file): 25% by construction, more where
# each call overshoots its target by a slow round (TCG).  Rounds, not its
# CPU time: a host that takes the virtual CPU away inside a() swells a()'s
# CPU time (the guest's clock runs on), not its rounds, nor its samples
# (a late timer's missed periods are dropped).
truth_a() {
	sed -n 's/^cpusplit: a_ns=[0-9]* b_ns=[0-9]* a_rounds=\([0-9]*\) b_rounds=\([0-9]*\)$/\1 \2/p' "$1" |
		awk 'NF == 2 && $1 + $2 > 0 { printf "%.1f\n", 100 * $1 / ($1 + $2) }'
}

# The sampled samples' count in a stream.
nsamples() {
	grep -c '^sample' "$1" || [ $? -eq 1 ]
}

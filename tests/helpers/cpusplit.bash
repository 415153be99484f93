# The truth of tests/workloads/cpusplit (a() 25%, b() 75% of its CPU time)
# and the counts its recordings are checked by (lp-record.bats and
# lp-record-user.bats).

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

# The sampled samples' count in a stream.
nsamples() {
	grep -c '^sample' "$1" || [ $? -eq 1 ]
}

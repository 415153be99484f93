# user-share.awk -v FUNC=NAME [-v FROM=NS -v TO=NS] STREAM: of an lp
# stream's samples taken in user space (no kernel frame in their stack),
# from FROM to TO when given, the share (percent) whose stack has a frame
# of FUNC, their count and the share's standard error: "SHARE COUNT SE".
# What an ordinary user's recording (perf events, user space only) and
# root's (every sample) have in common to compare.
#
# The error is the batch means': the samples in 10 runs of consecutive
# ones, the spread of the runs' shares over the square root of 10.  A
# program's phases make its samples' frames anything but independent
# draws, which the binomial error would assume.
BEGIN { FS = "\t"; BATCHES = 10 }
$1 == "frame" { kind[$2] = $3; sym[$2] = $6 }
$1 == "stack" {
	n = split($3, f, ",")
	k = 0
	h = 0
	for (i = 1; i <= n; i++) {
		if (kind[f[i]] == "k") k = 1
		if (sym[f[i]] == FUNC) h = 1
	}
	in_kernel[$2] = k
	has[$2] = h
}
$1 == "sample" {
	if (in_kernel[$9]) next
	if (FROM != "" && $2 < FROM + 0) next
	if (TO != "" && $2 > TO + 0) next
	hit[++t] = has[$9]
	if (has[$9]) m++
}
END {
	se = 0
	if (t >= BATCHES) {
		size = int(t / BATCHES)
		sum = sumsq = 0
		for (b = 0; b < BATCHES; b++) {
			c = 0
			for (i = b * size + 1; i <= (b + 1) * size; i++) c += hit[i]
			s = 100 * c / size
			sum += s
			sumsq += s * s
		}
		mean = sum / BATCHES
		var = (sumsq - BATCHES * mean * mean) / (BATCHES - 1)
		se = sqrt(var > 0 ? var : 0) / sqrt(BATCHES)
	}
	printf "%.1f %d %.1f\n", t ? 100 * m / t : 0, t, se
}

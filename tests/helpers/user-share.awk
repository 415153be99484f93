# user-share.awk -v FUNC=NAME STREAM: of an lp stream's samples taken in
# user space (no kernel frame in their stack), the share (percent) whose
# stack has a frame of FUNC, and their count: "SHARE COUNT".  What an
# ordinary user's recording (perf events, user space only) and root's
# (every sample) have in common to compare.
BEGIN { FS = "\t" }
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
	t++
	if (has[$9]) m++
}
END { printf "%.1f %d\n", t ? 100 * m / t : 0, t }

# The truth of tests/workloads/usdtreq's lp:req and lp:wide probes, for
# lp-trace-usdt.bats and kernel-core.bats: i = 0..49 in order, req(int i,
# int 3i), wide(long long -3000000000 i, unsigned char 200 + i), no other
# argument.

# usdtreq_args FILE: "REQ WIDE BAD": the req and wide events in FILE and
# how many of them are not what usdtreq passed ("50 50 0" when all are).
usdtreq_args() {
	awk -F'\t' '$1 == "event" && $5 == "usdt:lp:req" {
		if (NF != 7 || $6 != "arg0=" r + 0 || $7 != "arg1=" 3 * r) bad++; r++ }
		$1 == "event" && $5 == "usdt:lp:wide" {
		if (NF != 7 || $6 != "arg0=" sprintf("%.0f", -3000000000 * w + 0) || $7 != "arg1=" 200 + w) bad++; w++ }
		END { print r + 0, w + 0, bad + 0 }' "$1"
}

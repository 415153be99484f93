# Samples of a stream by the functions on their stacks: shared by the
# suites that weigh or count them (offcpu.bats, kernel-core.bats).

# weight FILE FUNC: the summed weight of the samples with FUNC on their
# stack (all of them when FUNC is empty), from lp-collapse's folded output.
weight() {
	local -
	set -o pipefail		# lp-collapse's status, not only awk's
	lp-collapse "$1" | awk -v f="$2" '{ s = ";" $0; sub(/ [^ ]*$/, ";", s)
		if (f == "" || index(s, ";" f ";")) w += $NF } END { printf "%.0f\n", w }'
}

# count FILE FUNC: how many samples have FUNC on their stack.
count() {
	awk -F'\t' -v f="$2" '
		$1 == "frame" && $6 == f { fr[$2] = 1 }
		$1 == "stack" { n = split($3, a, ","); for (i = 1; i <= n; i++) if (a[i] in fr) st[$2] = 1 }
		$1 == "sample" && ($9 in st) { c++ }
		END { print c + 0 }' "$1"
}

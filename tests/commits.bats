#!/usr/bin/env bats
# The history's rule (dev/commit-msg): a subject "AREA: what it does" of at
# most 72 characters in the imperative, the why in a body after a blank
# line; the hook refuses each kind of offence on its own, and every commit
# since the rule began keeps it (make check-commits).

load helpers/common

HOOK=$LP_TOP/dev/commit-msg

setup() {
	cd "$BATS_TEST_TMPDIR"
}

@test "dev/commit-msg: the rule's own example passes, body and git's comments included" {
	printf 'lp-trace: fall back to per-probe uprobe links\n\nWhy, with figures.\n# a comment of git'"'"'s\n' >m
	run -0 --separate-stderr "$HOOK" m
	[ -z "$stderr" ]
	# 72 characters exactly
	printf 'lp-trace: %s\n' "$(printf 'x%.0s' $(seq 62))" >m
	run -0 "$HOOK" m
}

@test "dev/commit-msg: each offence refused on its own, named, exit 1" {
	printf 'lp-trace: %s\n' "$(printf 'x%.0s' $(seq 63))" >m
	run -1 --separate-stderr "$HOOK" m
	[[ $stderr == "m: subject of 73 characters, 72 at most: lp-trace: x"* ]] || fail "$stderr"
	printf 'fall back to per-probe uprobe links\n' >m
	run -1 --separate-stderr "$HOOK" m
	[ "$stderr" = 'm: subject without its area ("lp-trace: ..."): fall back to per-probe uprobe links' ]
	printf 'lp-trace: fall back to per-probe uprobe links.\n' >m
	run -1 --separate-stderr "$HOOK" m
	[ "$stderr" = 'm: subject ends with a full stop: lp-trace: fall back to per-probe uprobe links.' ]
	printf 'lp-trace: fixed the fallback to per-probe links\n' >m
	run -1 --separate-stderr "$HOOK" m
	[ "$stderr" = 'm: subject not in the imperative ("fixed": say what the commit does, "fix", "add"): lp-trace: fixed the fallback to per-probe links' ]
	printf 'lp-trace: fall back to per-probe uprobe links\nWhy.\n' >m
	run -1 --separate-stderr "$HOOK" m
	[ "$stderr" = 'm: no blank line between the subject and the body' ]
	: >m
	run -1 --separate-stderr "$HOOK" m
	[[ $stderr == "m: no subject"* ]] || fail "$stderr"
	run -2 "$HOOK"
}

@test "make check-commits: every commit since the rule began keeps it; one that does not is named" {
	if [ ! -d "$LP_TOP/.git" ]; then
		[ "${CI:-}" != true ] || fail "no .git under CI=true, which runs on a clone"
		skip "not a git checkout: no history to check"
	fi
	require_cmd git
	run -0 --separate-stderr make -s -C "$LP_TOP" check-commits
	[ -z "$stderr" ]
	# A history with one offence: the commit is named, make fails.
	git clone -q "$LP_TOP" repo
	cd repo
	git -c user.name=t -c user.email=t@t commit -q --allow-empty -m 'Fixed things.'
	run -2 --separate-stderr make -s check-commits
	sha=$(git rev-parse --short HEAD)
	grep -qF "$sha: subject without its area" <<<"$stderr" || fail "$stderr"
}

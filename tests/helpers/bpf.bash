# What a recorder holds in the kernel, and whether it let go: shared by the
# suites that check nothing of lp's stays attached after any end.

# The BPF program or link ids (kind prog_id or link_id) a running process
# holds, from its file descriptors: exact, whatever else runs on the machine.
held_ids() {
	cat /proc/"$1"/fdinfo/* 2>/dev/null | awk -v k="$2:" '$1 == k { print $2 }' | sort -u
}

# Waits (up to 5 s: the kernel frees programs after an RCU grace period)
# until none of these programs ($1) and links ($2) exist any more.
all_gone() {
	local i id left
	for i in $(seq 50); do
		left=
		for id in $1; do if bpftool prog show id "$id" >/dev/null 2>&1; then left="$left prog:$id"; fi; done
		for id in $2; do if bpftool link show id "$id" >/dev/null 2>&1; then left="$left link:$id"; fi; done
		if [ -z "$left" ]; then return 0; fi
		sleep 0.1
	done
	echo "still in the kernel:$left"
	return 1
}

# Waits (up to 5 s: attaching under load, and a calibration's own links
# going away, take time) until process $1 holds exactly $2 BPF links, and
# prints the links it holds then (all of them, whatever their number).
wait_links() {
	local links
	for _ in $(seq 50); do
		links=$(held_ids "$1" link_id)
		if [ "$(wc -w <<<"$links")" -eq "$2" ]; then break; fi
		sleep 0.1 || return 1
	done
	echo "$links"
}

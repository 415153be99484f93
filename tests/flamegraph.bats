#!/usr/bin/env bats
# The SVG flame graph (lib/output/flamegraph.c) through lp-collapse --format svg and
# lp-diff --format svg: the document is well-formed XML whatever the names,
# frame widths are the frames' shares, output is deterministic, colours mean
# what they say, huge profiles stay drawable, and (in chromium) the picture
# is a flame graph and its script searches and zooms.

setup() {
	load helpers/common
	load_bats_libs
	require_cmd python3
	SVGF=$FIXTURES/svg
	RENDER=$BATS_TEST_DIRNAME/helpers/render-svg
}

# check_svg FILE: runs the Python on stdin with the SVG parsed (a parse
# error fails the test: expat refuses any document that is not well-formed
# XML, including bad UTF-8 and control characters).  It sees:
#   frames: list of dicts name, info (the tooltip's 2nd line), x, y, w,
#           fill (r, g, b), label, cls; svg: the root element; W: the width
#   frame(name): the one frame called name
check_svg() {
	local code
	code=$(cat)
	python3 - "$1" "$code" <<'EOF'
import re, sys, xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
svg = ET.parse(sys.argv[1]).getroot()
assert svg.tag == NS + "svg", svg.tag
W = float(svg.get("width"))
frames = []
for g in svg.find(".//%sg[@id='frames']" % NS):
    title = g.find(NS + "title").text
    name, info = title.split("\n", 1)
    r = g.find(NS + "rect")
    t = g.find(NS + "text")
    fill = tuple(int(v) for v in re.match(r"rgb\((\d+),(\d+),(\d+)\)$", r.get("fill")).groups())
    frames.append(dict(name=name, info=info, x=float(r.get("x")), y=float(r.get("y")),
                       w=float(r.get("width")), fill=fill, label=t.text or "",
                       cls=g.get("class") or ""))
def frame(name):
    found = [f for f in frames if f["name"] == name]
    assert len(found) == 1, "%d frames called %r" % (len(found), name)
    return found[0]
def near(a, b, tol=0.011):
    assert abs(a - b) <= tol, "%r is not %r (+-%r)" % (a, b, tol)
exec(sys.argv[2])
EOF
}

@test "flamegraph: simple profile: well-formed, widths are shares, siblings in name order" {
	run -0 lp-collapse --format svg "$SVGF/simple.folded"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/g.svg"
	check_svg "$BATS_TEST_TMPDIR/g.svg" <<'EOF'
assert W == 1200
assert [f["name"] for f in frames] == ["all", "main", "foo", "bar", "baz", "qux"], frames
span = W - 20
for name, share in [("all", 1), ("main", 1), ("foo", .5), ("bar", .3), ("baz", .1), ("qux", .5)]:
    near(frame(name)["w"], share * span)
near(frame("all")["x"], 10)
near(frame("foo")["x"], 10)
near(frame("bar")["x"], 10)                     # children start at their parent
near(frame("baz")["x"], 10 + .3 * span)         # after bar
near(frame("qux")["x"], 10 + .5 * span)         # after foo (and its 10 self samples)
# flame: each level one frame height above its parent
assert frame("main")["y"] == frame("all")["y"] - 16
assert frame("bar")["y"] == frame("foo")["y"] - 16
assert frame("bar")["info"] == "(30 samples, 30.00%)", frame("bar")["info"]
assert frame("all")["info"] == "(100 samples, 100.00%)"
assert frame("foo")["label"] == "foo"
assert svg.find(".//{http://www.w3.org/2000/svg}script") is not None
EOF
	if command -v xmllint >/dev/null; then
		run -0 xmllint --noout "$BATS_TEST_TMPDIR/g.svg"
	fi
}

@test "flamegraph: output is byte-identical across runs and input orders" {
	lp-collapse --format svg "$SVGF/kinds.folded" >"$BATS_TEST_TMPDIR/a.svg"
	lp-collapse --format svg "$SVGF/kinds.folded" >"$BATS_TEST_TMPDIR/b.svg"
	sort -r "$SVGF/kinds.folded" | lp-collapse --format svg - >"$BATS_TEST_TMPDIR/c.svg"
	run -0 cmp "$BATS_TEST_TMPDIR/a.svg" "$BATS_TEST_TMPDIR/b.svg"
	run -0 cmp "$BATS_TEST_TMPDIR/a.svg" "$BATS_TEST_TMPDIR/c.svg"
	[ "$(grep -c '<rect' "$BATS_TEST_TMPDIR/a.svg")" -gt 10 ]
}

@test "flamegraph: hostile names are escaped into a well-formed document" {
	run -0 lp-collapse --format svg --title 'a <b> & "c" ]]> --' "$SVGF/hostile.folded"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/h.svg"
	check_svg "$BATS_TEST_TMPDIR/h.svg" <<'EOF'
NS = "{http://www.w3.org/2000/svg}"
names = sorted(f["name"] for f in frames)
for n in ["<script>alert(1)</script>", "a&b", "\"quoted\" 'single'", "]]>", "--> <!-- x",
          "operator<<(std::ostream&, int const&)", "\u00fcn\u00efc\u00f6d\u00e9",
          "\u65e5\u672c\u8a9e", "\\xFF\\xFE bad", "\\xC0\\xAF overlong",
          "\\xED\\xA0\\x80 surrogate", "tab\\x09here"]:
    assert n in names, (n, names)
# the names are text, never markup: one script (ours), no foreign elements
assert len(svg.findall(".//" + NS + "script")) == 1
assert {e.tag for e in svg.iter()} <= {NS + t for t in
        ("svg", "defs", "linearGradient", "stop", "style", "script", "rect", "text", "g", "title")}
assert svg.find(NS + "text[@id='title']").text == 'a <b> & "c" ]]> --'
near(frame("operator<<(std::ostream&, int const&)")["w"], 4 / 14 * 1180)
# labels: the whole name, or as much as fits followed by "..", or nothing
truncated = 0
for f in frames:
    fit = int(f["w"] / (12 * 0.59))
    lab = f["label"]
    assert len(lab) <= fit, (lab, f["w"])
    if lab != f["name"]:
        assert lab == "" and fit < 3 or lab.endswith("..") and f["name"].startswith(lab[:-2]), (lab, f["name"])
        truncated += lab != ""
assert truncated >= 2, truncated
EOF
	if command -v xmllint >/dev/null; then
		run -0 xmllint --noout "$BATS_TEST_TMPDIR/h.svg"
	fi
}

@test "flamegraph: frame kinds from FlameGraph annotations have distinct hues, names keep one colour" {
	run -0 lp-collapse --format svg "$SVGF/kinds.folded"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/k.svg"
	check_svg "$BATS_TEST_TMPDIR/k.svg" <<'EOF'
def hue(f):
    r, g, b = f["fill"]
    if r >= 205 and b <= 55: return "user"                  # hot: reds to yellows
    if r <= 140 and g <= 190 and b >= 215: return "kernel"  # blues
    if r <= 120 and g >= 185 and b <= 100: return "jit"     # greens
    if r <= 110 and g >= 200 and b >= 200: return "inline"  # aquas
    return "?"
for f in frames:
    want = {"_[k]": "kernel", "_[j]": "jit", "_[i]": "inline"}.get(f["name"][-4:], "user")
    assert hue(f) == want, (f["name"], f["fill"], hue(f), want)
# the label is the frame text, annotation included
assert frame("sys_read_[k]")["label"] == "sys_read_[k]"
# compute appears under work and under Lfoo_[j]: same name, same colour
c = [f["fill"] for f in frames if f["name"] == "compute"]
assert len(c) == 2 and c[0] == c[1], c
near(frame("vfs_read_[k]")["w"], .25 * 1180)
EOF
}

@test "flamegraph: lp-diff --format svg: grown frame red, shrunk blue, unchanged white, widths by after" {
	run -0 lp-diff --format svg "$SVGF/before.folded" "$SVGF/after.folded"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/d.svg"
	check_svg "$BATS_TEST_TMPDIR/d.svg" <<'EOF'
g, s, u = frame("grows"), frame("shrinks"), frame("steady")
assert g["fill"] == (255, 0, 0), g["fill"]      # the largest change: full red
assert s["fill"] == (0, 0, 255), s["fill"]      # as large, the other way: full blue
assert u["fill"] == (255, 255, 255), u["fill"]
assert frame("main")["fill"] == (255, 255, 255)
near(g["w"], .4 * 1180)
near(s["w"], .1 * 1180)
assert g["info"] == "(40 samples, 40.00%; before 10, 10.00%; +30.00% of total)", g["info"]
assert s["info"] == "(10 samples, 10.00%; before 40, 40.00%; -30.00% of total)", s["info"]
EOF
}

@test "flamegraph: differential saturation follows the change in share, not raw counts" {
	# after has 10x the samples: raw counts all grow, shares do not
	awk '{ $NF = $NF * 10; print }' "$SVGF/before.folded" >"$BATS_TEST_TMPDIR/big.folded"
	printf 'main;steady 500\nmain;grows 150\nmain;shrinks 350\n' >"$BATS_TEST_TMPDIR/after.folded"
	run -0 lp-diff --format svg "$SVGF/before.folded" "$BATS_TEST_TMPDIR/after.folded"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/d.svg"
	check_svg "$BATS_TEST_TMPDIR/d.svg" <<'EOF'
# shares: grows 10% -> 15%, shrinks 40% -> 35%: equal and opposite
assert frame("grows")["fill"] == (255, 0, 0), frame("grows")["fill"]
assert frame("shrinks")["fill"] == (0, 0, 255), frame("shrinks")["fill"]
assert frame("steady")["fill"] == (255, 255, 255), frame("steady")["fill"]
EOF
	run -0 lp-diff --format svg "$SVGF/before.folded" "$BATS_TEST_TMPDIR/big.folded"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/e.svg"
	check_svg "$BATS_TEST_TMPDIR/e.svg" <<'EOF'
for f in frames:
    assert f["fill"] == (255, 255, 255), (f["name"], f["fill"])
EOF
}

@test "flamegraph: 200k distinct stacks: min-width and the frame cap bound the rectangles" {
	# 10,000 chains ten deep, each just wider than 0.1 px (100,000 drawable
	# frames), and 190,000 stacks far narrower
	awk 'BEGIN {
		for (i = 0; i < 10000; i++) {
			s = "main"
			for (j = 0; j < 10; j++) s = s ";c" i "_" j
			print s, 20
		}
		for (i = 0; i < 190000; i++) print "main;tiny;t" i, 0.001
	}' >"$BATS_TEST_TMPDIR/wide.folded"
	run -0 lp-collapse --format svg -o "$BATS_TEST_TMPDIR/w.svg" "$BATS_TEST_TMPDIR/wide.folded"
	check_svg "$BATS_TEST_TMPDIR/w.svg" <<'EOF'
assert len(frames) == 50000, len(frames)        # the cap, exactly
assert not any(f["name"].startswith("t") and f["name"][1:].isdigit() for f in frames)
# what is kept is a tree: under every frame but the root lies its parent
import bisect
levels = {}
for f in frames:
    levels.setdefault(f["y"], []).append((f["x"], f["x"] + f["w"]))
for v in levels.values():
    v.sort()
for f in frames:
    if f["name"] == "all":
        continue
    below = levels[f["y"] + 16]
    i = bisect.bisect_right(below, (f["x"] + 0.005, float("inf"))) - 1
    assert i >= 0 and below[i][1] >= f["x"] + f["w"] - 0.02, f
EOF
	run -0 lp-collapse --format svg --min-width 5 -o "$BATS_TEST_TMPDIR/m.svg" "$BATS_TEST_TMPDIR/wide.folded"
	check_svg "$BATS_TEST_TMPDIR/m.svg" <<'EOF'
assert all(f["w"] >= 4.995 for f in frames), min(f["w"] for f in frames)
# the chains are 0.118 px, "tiny" (all 190,000 leaves) 1.12 px
assert [f["name"] for f in frames] == ["all", "main"], [f["name"] for f in frames]
EOF
}

@test "flamegraph: empty profile gives a valid SVG saying no samples" {
	run -0 lp-collapse --format svg /dev/null
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/e.svg"
	check_svg "$BATS_TEST_TMPDIR/e.svg" <<'EOF'
assert frames == []
assert "no samples" in [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")]
EOF
}

@test "flamegraph: --inverted draws an icicle graph, --width and --title apply" {
	run -0 lp-collapse --format svg --inverted --width 800 --title "slow requests" "$SVGF/simple.folded"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/i.svg"
	check_svg "$BATS_TEST_TMPDIR/i.svg" <<'EOF'
assert W == 800
assert frame("main")["y"] == frame("all")["y"] + 16       # hanging down
assert frame("bar")["y"] == frame("foo")["y"] + 16
near(frame("foo")["w"], .5 * 780)
assert svg.find("{http://www.w3.org/2000/svg}text[@id='title']").text == "slow requests"
EOF
}

# --- in a real browser ----------------------------------------------------

@test "flamegraph: chromium draws the frames in their colours" {
	require_cmd chromium
	lp-collapse --format svg "$SVGF/kinds.folded" >"$BATS_TEST_TMPDIR/k.svg"
	# the top row of a few frames' rectangles, clear of their labels
	pts=$(check_svg "$BATS_TEST_TMPDIR/k.svg" <<'EOF'
for n in ("all", "compute", "sys_read_[k]", "Lbar_[j]", "interp"):
    f = [f for f in frames if f["name"] == n][0]
    print("%d,%d" % (f["x"] + f["w"] / 2, f["y"] + 1))
EOF
	)
	fills=$(check_svg "$BATS_TEST_TMPDIR/k.svg" <<'EOF'
for n in ("all", "compute", "sys_read_[k]", "Lbar_[j]", "interp"):
    print("%d %d %d" % [f for f in frames if f["name"] == n][0]["fill"])
EOF
	)
	# shellcheck disable=SC2086
	run -0 timeout 90 "$RENDER" png "$BATS_TEST_TMPDIR/k.svg" "$BATS_TEST_TMPDIR/k.png" $pts
	echo "$output"
	colours=$(sed -n 's/^size [0-9]*x[0-9]* colours //p' <<<"$output")
	# a blank or failed page has a handful of colours; this one has frames,
	# anti-aliased text and the background gradient
	[ "$colours" -ge 50 ]
	# every sampled pixel is its frame's fill (colour management may move a
	# channel by a unit or two)
	paste <(grep '^pixel' <<<"$output" | cut -d' ' -f4-) <(printf '%s\n' "$fills") |
		awk '{ for (i = 1; i <= 3; i++) { d = $i - $(i + 3); if (d < -3 || d > 3) bad = 1 } n++ }
		     END { exit bad || n != 5 }'
}

@test "flamegraph: chromium runs the search: matches highlighted, share of the total shown" {
	require_cmd chromium
	lp-collapse --format svg "$SVGF/simple.folded" >"$BATS_TEST_TMPDIR/s.svg"
	run -0 timeout 90 "$RENDER" eval "$BATS_TEST_TMPDIR/s.svg" '(function () {
		var r = lpfg.search("^ba");
		var hl = lpfg.frames.filter(function (f) {
			return f.rect.getAttribute("fill") === "rgb(230,0,230)"; }).map(function (f) { return f.name; });
		var text = document.getElementById("matched").textContent;
		var nested = lpfg.search("^(foo|bar)$").percent;   // bar is inside foo: 50%
		lpfg.reset_search();
		var restored = lpfg.find("bar")[0].rect.getAttribute("fill") === lpfg.find("bar")[0].fill;
		return [r.frames, r.percent.toFixed(2), hl.sort().join(","), text, nested.toFixed(2), restored];
	})()'
	assert_output '[2,"40.00","bar,baz","Matched: 40.0% (2 frames)","50.00",true]'
}

@test "flamegraph: chromium runs the zoom: the frame fills the width, others hide, reset restores" {
	require_cmd chromium
	lp-collapse --format svg "$SVGF/simple.folded" >"$BATS_TEST_TMPDIR/z.svg"
	run -0 timeout 90 "$RENDER" eval "$BATS_TEST_TMPDIR/z.svg" '(function () {
		function w(n) { return lpfg.find(n)[0].rect.getAttribute("width"); }
		function cls(n) { return lpfg.find(n)[0].g.getAttribute("class") || ""; }
		// a real click, through the event handler
		lpfg.find("foo")[0].rect.dispatchEvent(new MouseEvent("click", { bubbles: true }));
		var zoomed = [w("foo"), w("bar"), lpfg.find("bar")[0].rect.getAttribute("x"), w("baz"),
			cls("qux"), cls("main"), cls("all"), w("main"),
			document.getElementById("unzoom").getAttribute("class")];
		document.getElementById("unzoom").dispatchEvent(new MouseEvent("click", { bubbles: true }));
		var reset = [w("foo"), w("bar"), cls("qux"), cls("main"),
			document.getElementById("unzoom").getAttribute("class")];
		return [zoomed, reset];
	})()'
	assert_output '[["1180.00","708.00","10.00","236.00","hide","parent","parent","1180.00",""],["590.00","354.00","","","hide"]]'
}

@test "flamegraph: chromium loads the hostile-name graph without a script error" {
	require_cmd chromium
	lp-collapse --format svg "$SVGF/hostile.folded" >"$BATS_TEST_TMPDIR/h.svg"
	run -0 timeout 90 "$RENDER" eval "$BATS_TEST_TMPDIR/h.svg" \
		'[lpfg.frames.length, lpfg.find("<script>alert(1)<\/script>").length, lpfg.search("<<").frames]'
	assert_output '[14,1,1]'
}

@test "flamegraph: chromium opens the SVG itself: its script runs, a ?s= link searches" {
	require_cmd chromium
	lp-collapse --format svg "$SVGF/simple.folded" >"$BATS_TEST_TMPDIR/s.svg"
	run -0 timeout 90 "$RENDER" dom "$BATS_TEST_TMPDIR/s.svg" '?s=^ba'
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/dom.svg"
	check_svg "$BATS_TEST_TMPDIR/dom.svg" <<'EOF2'
hl = sorted(f["name"] for f in frames if f["fill"] == (230, 0, 230))
assert hl == ["bar", "baz"], hl
m = svg.find("{http://www.w3.org/2000/svg}text[@id='matched']")
assert m.text == "Matched: 40.0% (2 frames)" and "hide" not in m.get("class"), (m.text, m.get("class"))
EOF2
}

@test "flamegraph: siblings that share a prefix merge right (a;b, a;b!;c, a;b;d), empty frames are frames" {
	run -0 lp-collapse --format svg "$SVGF/order.folded"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/o.svg"
	check_svg "$BATS_TEST_TMPDIR/o.svg" <<'EOF2'
span = 1180
b = [f for f in frames if f["name"] == "b" and f["y"] == frame("d")["y"] + 16]
assert len(b) == 1, b                          # one a;b, holding its self sample and d
near(b[0]["w"], 2 / 6 * span)
near(frame("b!")["w"], 1 / 6 * span)
near(frame("d")["x"], b[0]["x"])
near(frame("")["w"], 2 / 6 * span)               # a;;e: the empty frame
assert frame("e")["y"] == frame("")["y"] - 16
near(frame("a")["w"], 5 / 6 * span)
assert len(frames) == 9, [f["name"] for f in frames]
EOF2
}

@test "flamegraph: perf script input: kinds come from the samples (kernel, JIT), with or without --kernel" {
	zcat "$CORPUS/flamegraph/example-perf-stacks.txt.gz" >"$BATS_TEST_TMPDIR/perf.txt"
	run -0 lp-collapse --format svg "$BATS_TEST_TMPDIR/perf.txt"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/p.svg"
	run -0 lp-collapse --format svg --all "$BATS_TEST_TMPDIR/perf.txt"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/pa.svg"
	for f in p pa; do
		check_svg "$BATS_TEST_TMPDIR/$f.svg" <<'EOF2'
def hue(f):
    r, g, b = f["fill"]
    if r >= 205 and b <= 55: return "user"
    if r <= 140 and g <= 190 and b >= 215: return "kernel"
    if r <= 120 and g >= 185 and b <= 100: return "jit"
    return "?"
want = {"tcp_sendmsg": "kernel", "sys_write": "kernel", "Interpreter": "jit",
        "JavaThread::run": "user", "start_thread": "user"}
seen = set()
for f in frames:
    base = f["name"][:-4] if f["name"][-4:] in ("_[k]", "_[j]") else f["name"]
    if base in want:
        assert hue(f) == want[base], (f["name"], f["fill"])
        seen.add(base)
assert seen == set(want), seen
legend = [t.text for t in svg.find(".//{http://www.w3.org/2000/svg}g[@id='legend']")
          if t.tag.endswith("text")]
assert legend == ["user", "kernel", "JIT"], legend
EOF2
	done
}

@test "flamegraph: a failed write is an error (exit 1), never a silent truncated graph" {
	run -1 --separate-stderr sh -c 'lp-collapse --format svg "$1" >/dev/full' _ "$SVGF/kinds.folded"
	[[ $stderr == "lp-collapse: "*"No space left on device" ]]
}

@test "flamegraph: chromium shows a frame's name, count and share on hover (and both sides in a diff)" {
	require_cmd chromium
	lp-diff --format svg "$SVGF/before.folded" "$SVGF/after.folded" >"$BATS_TEST_TMPDIR/d.svg"
	run -0 timeout 90 "$RENDER" eval "$BATS_TEST_TMPDIR/d.svg" '(function () {
		lpfg.find("grows")[0].rect.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
		var over = document.getElementById("details").textContent;
		lpfg.find("grows")[0].rect.dispatchEvent(new MouseEvent("mouseout", { bubbles: true }));
		return [over, document.getElementById("details").textContent];
	})()'
	assert_output '["Function: grows (40 samples, 40.00%; before 10, 10.00%; +30.00% of total)"," "]'
}

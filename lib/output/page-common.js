  /* ---------- page-common.js: what lp-report's and lp-serve's pages share
   * (numbers and durations as text, the flame graphs' palette, where a
   * tooltip goes), put in place of each page's LP-INCLUDE line naming it
   * when lp builds it (lib/page-include). ---------- */

  function isNum(x) { return typeof x === "number" && isFinite(x); }

  function fmtInt(n) {
    return isNum(n) ? Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",") : "–";
  }

  // 3 significant digits at most, in the largest unit it reaches.
  function fmtDur(ns) {
    if (!isNum(ns)) return "–";
    var units = [[1e9, "s"], [1e6, "ms"], [1e3, "µs"], [1, "ns"]];
    for (var i = 0; i < units.length; i++) {
      if (Math.abs(ns) >= units[i][0] || i === units.length - 1) {
        var v = ns / units[i][0];
        var s = Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2);
        return s.replace(/(\.\d*[1-9])0+$/, "$1").replace(/\.0+$/, "") + " " + units[i][1];
      }
    }
  }

  // FNV-1a of a frame's name: its colour is the same on every page and run.
  function hash(s) {
    var h = 0x811c9dc5;
    for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193); }
    return h >>> 0;
  }

  // A frame's colour by its kind: kernel oranges, inlined aquas, and
  // flamegraph.pl's "hot" palette for the rest.
  function paletteColour(nm, kind) {
    var h = hash(nm), a = (h & 0xff) / 255, b = (h >>> 8 & 0xff) / 255, c = (h >>> 16 & 0xff) / 255, rgb;
    if (kind === "k") rgb = [225 + 30 * a, 120 + 50 * b, 20 + 30 * c];
    else if (kind === "i") rgb = [60 + 50 * a, 200 + 55 * b, 200 + 55 * c];
    else rgb = [205 + 50 * c, 230 * a, 55 * b];
    return "rgb(" + rgb.map(Math.round).join(",") + ")";
  }

  // Shows the tooltip element tip beside the pointer, inside the window.
  function placeTip(tip, ev) {
    tip.style.display = "block";
    var w = tip.offsetWidth, h = tip.offsetHeight;
    var x = ev.clientX + 14, y = ev.clientY + 16;
    if (x + w > window.innerWidth - 4) x = Math.max(4, ev.clientX - w - 14);
    if (y + h > window.innerHeight - 4) y = Math.max(4, ev.clientY - h - 12);
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }

  // One frame of a flame graph: its box, and its name where it fits
  // (cut with ".." where it does not quite).
  function paintFrame(ctx, name, fill, x, y, w, rowH, charW) {
    ctx.fillStyle = fill;
    ctx.fillRect(x, y, Math.max(w - 0.5, 0.5), rowH - 1);
    var fit = Math.floor((w - 6) / charW);
    if (fit >= 3) {
      if (name.length > fit) name = name.slice(0, fit - 2) + "..";
      ctx.fillStyle = "#000";
      ctx.fillText(name, x + 3, y + rowH / 2);
    }
  }

  // The frame a row's hit list (frame, x, width, ...) has at x, or -1.
  function rowHit(row, x) {
    if (!row) return -1;
    for (var k = 0; k < row.length; k += 3)
      if (x >= row[k + 1] && x < row[k + 1] + row[k + 2]) return row[k];
    return -1;
  }

  // What a frame's children leave of its weight, in a flattened tree t
  // (a subtree is the index range [i, t.end[i])).
  function selfWeight(t, i) {
    var rest = t.value[i];
    for (var j = i + 1; j < t.end[i]; j = t.end[j]) rest -= t.value[j];
    return Math.max(0, rest);
  }

  // The frames of t matching re, and their share of total counting each
  // matched subtree once (a match inside a matched frame adds nothing), as
  // flamegraph.pl does.
  function matchFrames(t, re, total) {
    var m = new Uint8Array(t.n), count = 0, covered = 0;
    for (var i = 1; i < t.n;) {
      if (re.test(t.name[i])) {
        covered += t.value[i];
        for (var j = i; j < t.end[i]; j++) if (re.test(t.name[j])) { m[j] = 1; count++; }
        i = t.end[i];
      } else i++;
    }
    return { matches: m, count: count, share: total > 0 ? covered / total : 0 };
  }

  /* ---------- heatmap.js: the Heatmap section's canvas: seconds by
   * offsets, hovered, and a range of cells selected by dragging (its
   * flame graph is range.js's). ---------- */

  // White for nothing, through orange to dark red for the fullest cell, as
  // lp's SVG heatmap (lib/output/heatmap.c).
  function shade(n, max) {
    if (!(n > 0) || !(max > 0)) return "#f3f4f6";
    var stops = [[255, 245, 225], [250, 140, 0], [130, 0, 0]];
    var f = Math.min(1, n / max), i = f < 0.5 ? 0 : 1, u = f < 0.5 ? f / 0.5 : (f - 0.5) / 0.5;
    return "rgb(" + [0, 1, 2].map(function (k) { return Math.round(stops[i][k] + (stops[i + 1][k] - stops[i][k]) * u); }).join(",") + ")";
  }

  var heat = null;  // what the heatmap shows and where, for hovering
  function renderHeat(s) {
    var h = obj(s.heat), cols = arr(h.columns).filter(Array.isArray);
    var canvas = $("heatmap"), empty = !cols.length;
    $("heat-empty").hidden = !empty;
    var untimed = Number(h.untimed) || 0;
    $("heat-untimed").hidden = !untimed;
    $("heat-untimed").textContent = untimed ? untimed + " samples kept have no time (a pprof, folded stacks, " +
      "bpftrace's counts): the heatmap leaves them out, the flame graph and tables hold them" : "";
    canvas.hidden = empty;
    if (empty) { heat = null; return; }
    var nrows = isNum(h.rows) && h.rows > 0 ? h.rows : cols[0].length || 50, max = h.max;
    if (!isNum(max) || max <= 0) {
      max = 0;
      cols.forEach(function (c) { c.forEach(function (n) { if (n > max) max = n; }); });
    }
    var L = 64, T = 6, B = 22, R = 8;
    var avail = Math.max(300, ($("heat-box").clientWidth || 1000) - L - R);
    var cw = Math.max(4, Math.min(28, Math.floor(avail / cols.length)));
    var ch = Math.max(2, Math.floor(300 / nrows));
    var W = L + cols.length * cw + R, H = T + nrows * ch + B;
    var ctx = sizeCanvas(canvas, W, H);
    canvas.style.width = W + "px";
    for (var c = 0; c < cols.length; c++)
      for (var r = 0; r < nrows; r++) {
        ctx.fillStyle = shade(+cols[c][r], max);
        ctx.fillRect(L + c * cw, T + r * ch, cw - (cw > 6 ? 1 : 0), ch);
      }
    ctx.fillStyle = "#5f6670";
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    ctx.textAlign = "right";
    for (var ms = 0; ms <= 1000; ms += 200) ctx.fillText(ms + " ms", L - 6, T + ms / 1000 * nrows * ch);
    ctx.textAlign = "left";
    var first = isNum(h.first_s) ? h.first_s : 0, step = Math.max(1, Math.ceil(44 / cw));
    for (c = 0; c < cols.length; c += step) ctx.fillText(String(first + c) + "s", L + c * cw, T + nrows * ch + B / 2 + 2);
    heat = { cols: cols, rows: nrows, first: first, L: L, T: T, cw: cw, ch: ch };
    drawSelection(ctx);
  }

  $("heatmap").addEventListener("mousemove", function (ev) {
    if (!heat) return hideTip();
    dragTo(ev);
    var r = this.getBoundingClientRect();
    var c = Math.floor((ev.clientX - r.left - heat.L) / heat.cw), row = Math.floor((ev.clientY - r.top - heat.T) / heat.ch);
    if (c < 0 || c >= heat.cols.length || row < 0 || row >= heat.rows) return hideTip();
    var step = 1000 / heat.rows, n = +heat.cols[c][row] || 0;
    var f = function (x) { return String(Math.round(x * 10) / 10); };
    var d = drag ? dragRange() : null;
    showTip(null, ["second " + (heat.first + c) + ", offset " + f(row * step) + "–" + f((row + 1) * step) + " ms, " +
      fmtInt(n) + " sample" + (n === 1 ? "" : "s"), d ? "selecting " + fmtSecs(d.from) + " to " + fmtSecs(d.to) :
      "drag across cells (or click one): their flame graph"], ev);
  });
  $("heatmap").addEventListener("mouseleave", hideTip);

  /* ---------- selecting a range of cells ---------- */

  // A cell (column c, row r) holds stream times [cellNs(first_s + c, rows, r),
  // cellNs(first_s + c, rows, r + 1)). Plain numbers: exact to 2^53 ns (104 days).
  function cellNs(second, rows, r) { return Math.round(second * 1e9 + r * (1e9 / rows)); }
  function fmtSecs(ns) { return (ns / 1e9).toFixed(3) + " s"; }

  // The selection as stream times (kept as the heatmap moves on), and a drag
  // under way between two cells, each { s: its second, r: its row }.
  var sel = null, drag = null;

  function cellAt(ev, clamp) {
    if (!heat) return null;
    var b = $("heatmap").getBoundingClientRect();
    var c = Math.floor((ev.clientX - b.left - heat.L) / heat.cw), r = Math.floor((ev.clientY - b.top - heat.T) / heat.ch);
    if (clamp) {
      c = Math.max(0, Math.min(heat.cols.length - 1, c));
      r = Math.max(0, Math.min(heat.rows - 1, r));
    } else if (c < 0 || c >= heat.cols.length || r < 0 || r >= heat.rows) return null;
    return { s: heat.first + c, r: r };
  }

  // From the earlier cell's start to the later one's end.
  function dragRange() {
    var a = drag.a, b = drag.b, n = drag.rows;
    if (b.s < a.s || (b.s === a.s && b.r < a.r)) { var t = a; a = b; b = t; }
    return { from: cellNs(a.s, n, a.r), to: cellNs(b.s, n, b.r + 1) };
  }

  function redrawHeat() { if (api.last) renderHeat(api.last); }

  function dragTo(ev) {
    if (!drag) return;
    var c = cellAt(ev, true);
    if (c && (c.s !== drag.b.s || c.r !== drag.b.r)) { drag.b = c; redrawHeat(); }
  }

  // The selected cells lightly filled, the outline of their union drawn.
  function drawSelection(ctx) {
    var h = heat, s = drag ? dragRange() : sel;
    if (!h || !s) return;
    var n = h.cols.length, R = h.rows, on = new Uint8Array(n * R), any = false;
    for (var c = 0; c < n; c++)
      for (var r = 0; r < R; r++)
        if (cellNs(h.first + c, R, r) < s.to && cellNs(h.first + c, R, r + 1) > s.from) on[c * R + r] = 1, any = true;
    if (!any) return;  // its seconds are no longer shown
    function is(c, r) { return c >= 0 && c < n && r >= 0 && r < R && on[c * R + r] === 1; }
    ctx.fillStyle = "rgba(26, 95, 180, 0.16)";
    ctx.beginPath();
    for (c = 0; c < n; c++)
      for (r = 0; r < R; r++) {
        if (!on[c * R + r]) continue;
        var x0 = h.L + c * h.cw, y0 = h.T + r * h.ch, x1 = x0 + h.cw, y1 = y0 + h.ch;
        ctx.fillRect(x0, y0, h.cw, h.ch);
        if (!is(c, r - 1)) { ctx.moveTo(x0, y0); ctx.lineTo(x1, y0); }
        if (!is(c, r + 1)) { ctx.moveTo(x0, y1); ctx.lineTo(x1, y1); }
        if (!is(c - 1, r)) { ctx.moveTo(x0, y0); ctx.lineTo(x0, y1); }
        if (!is(c + 1, r)) { ctx.moveTo(x1, y0); ctx.lineTo(x1, y1); }
      }
    ctx.strokeStyle = "#1a5fb4";
    ctx.lineWidth = 2;
    ctx.stroke();
    ctx.lineWidth = 1;
  }

  $("heatmap").addEventListener("mousedown", function (ev) {
    if (ev.button) return;
    var c = cellAt(ev, false);
    if (!c) return;
    ev.preventDefault();  // no text selection while dragging
    drag = { a: c, b: c, rows: heat.rows };
    redrawHeat();
  });
  // on the document: a drag may end outside the canvas (at the nearest cell)
  document.addEventListener("mousemove", dragTo);
  document.addEventListener("mouseup", function (ev) {
    if (!drag) return;
    dragTo(ev);
    var d = dragRange();
    drag = null;
    selectRange(d.from, d.to);
  });

  /* ---------- histogram.js: a probe's latency histogram (Hist), where
   * a click sets the probe's cut. ---------- */

  // A latency histogram on a log x axis, with the cut as a dashed line;
  // clicking sets the probe's threshold at that duration.
  function Hist(probe) {
    var self = this;
    this.probe = probe;
    this.canvas = el("canvas", "hist");
    this.bins = [];
    this.canvas.addEventListener("mousemove", function (ev) { self.hover(ev); });
    this.canvas.addEventListener("mouseleave", hideTip);
    this.canvas.addEventListener("click", function (ev) {
      var ns = self.nsAt(ev);
      if (ns > 0) post("/settings", { probe: self.probe.name, threshold: Math.max(1, Math.round(ns)) + "ns" });
    });
  }

  Hist.prototype.setData = function (hist, atNs) {
    this.bins = logBins(hist);
    this.at = atNs;
  };

  Hist.prototype.render = function () {
    var canvas = this.canvas, bins = this.bins;
    var W = Math.max(300, canvas.clientWidth || 600), H = 150, L = 44, R = 10, T = 10, B = 22;
    var ctx = sizeCanvas(canvas, W, H);
    ctx.font = "11px system-ui, sans-serif";
    ctx.fillStyle = "#5f6670";
    ctx.textBaseline = "middle";
    if (!bins.length) { this.geo = null; ctx.fillText("no spans yet", L, H / 2); return; }
    var lo = bins[0][0], hi = bins[bins.length - 1][1];
    if (isNum(this.at) && this.at > 0) { lo = Math.min(lo, this.at); hi = Math.max(hi, this.at * 1.05); }
    var lx0 = Math.log10(lo), lx1 = Math.log10(hi);
    if (lx1 - lx0 < 1e-9) lx1 = lx0 + 1;
    var maxC = Math.max.apply(null, bins.map(function (b) { return b[2]; })) || 1;
    var geo = this.geo = { L: L, R: R, W: W, lx0: lx0, lx1: lx1 };
    function X(ns) { return L + (Math.log10(ns) - lx0) / (lx1 - lx0) * (W - L - R); }
    function Y(c) { return T + (1 - c / maxC) * (H - T - B); }
    ctx.strokeStyle = "#9aa1ab";
    ctx.beginPath(); ctx.moveTo(L, H - B + 0.5); ctx.lineTo(W - R, H - B + 0.5); ctx.stroke();
    ctx.textAlign = "right";
    ctx.fillText(fmtInt(maxC), L - 4, T + 4);
    ctx.fillText("0", L - 4, H - B);
    ctx.textAlign = "center";
    var lastLabel = -1e9;
    for (var e = Math.floor(lx0); e <= Math.ceil(lx1); e++) {
      var ns = Math.pow(10, e), x = X(ns);
      if (ns < lo || ns > hi) continue;
      ctx.beginPath(); ctx.moveTo(x + 0.5, H - B); ctx.lineTo(x + 0.5, H - B + 5); ctx.stroke();
      if (x - lastLabel > 50) { ctx.fillText(fmtDur(ns), x, H - B + 13); lastLabel = x; }
    }
    ctx.fillStyle = "#9bb7d8";
    bins.forEach(function (b) {
      var x0 = X(b[0]), x1 = X(b[1]);
      ctx.fillRect(x0, Y(b[2]), Math.max(0.5, x1 - x0 - 0.6), H - B - Y(b[2]));
    });
    if (isNum(this.at) && this.at > 0) {
      var cx = Math.round(X(this.at)) + 0.5;
      ctx.strokeStyle = "#b3261e";
      ctx.lineWidth = 1.5;
      ctx.setLineDash([5, 3]);
      ctx.beginPath(); ctx.moveTo(cx, T - 6); ctx.lineTo(cx, H - B); ctx.stroke();
      ctx.setLineDash([]);
      ctx.lineWidth = 1;
      ctx.fillStyle = "#b3261e";
      ctx.textAlign = cx < W - 90 ? "left" : "right";
      ctx.fillText("cut " + fmtDur(this.at), cx < W - 90 ? cx + 5 : cx - 5, T + 2);
    }
  };

  Hist.prototype.nsAt = function (ev) {
    var g = this.geo;
    if (!g) return 0;
    var x = ev.clientX - this.canvas.getBoundingClientRect().left;
    if (x < g.L || x > g.W - g.R) return 0;
    return Math.pow(10, g.lx0 + (x - g.L) / (g.W - g.L - g.R) * (g.lx1 - g.lx0));
  };

  Hist.prototype.hover = function (ev) {
    var ns = this.nsAt(ev);
    if (!(ns > 0)) return hideTip();
    var lines = [];
    for (var i = 0; i < this.bins.length; i++) {
      var b = this.bins[i];
      if (ns >= b[0] && ns < b[1]) { lines.push(fmtDur(b[3]) + " – " + fmtDur(b[1]) + ": " + fmtInt(b[2]) + " span" + (b[2] === 1 ? "" : "s")); break; }
    }
    lines.push("click: cut at " + fmtDur(ns));
    showTip(null, lines, ev);
  };

  /* ---------- histogram.js: the latency histogram both pages draw (Hist),
   * lp-report's and lp-serve's: a probe's durations as bars on a log x
   * axis (ticks at 1, 2 and 5 of each decade, a grid of whole counts),
   * with what the data has of the density (a line), its modes (a marker
   * with its share) and its cuts (labelled dashed lines); drawn as SVG at
   * its box's width, again at each setData() then render() (lp-serve's
   * snapshots) and at a new window width; hovered; where the page gives
   * onCut, a click or a drag sets the cut there. From page-common.js it
   * takes the formats, the tooltip and onWidth, and from the page
   * fmtPct. ---------- */

  var SVG_NS = "http://www.w3.org/2000/svg";

  // An SVG element with these attributes, and text (textContent: a cut's
  // label is the data's).
  function svgEl(tag, attrs, text) {
    var e = document.createElementNS(SVG_NS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // A latency histogram's bins ([low ns, high ns, count], low to high) as
  // [low, high, count, true low], drawn on a log axis: empty or broken ones
  // left out, and a first bin from 0 given the next one's ratio for its low
  // edge (its true low, 0, is kept for the tooltip).
  function logBins(bins) {
    return (Array.isArray(bins) ? bins : []).filter(function (b) {
      return Array.isArray(b) && b[1] > 0 && b[1] > b[0];
    }).map(function (b, i, all) {
      var lo = +b[0], hi = +b[1];
      if (!(lo > 0)) { var nx = all[i + 1], ratio = nx && nx[0] > 0 ? nx[1] / nx[0] : 2; lo = hi / ratio; }
      return [lo, hi, +b[2] || 0, +b[0]];
    });
  }

  // The density's value nearest to ns on the log axis (0 without one).
  function densityAt(dens, ns) {
    var best = 0, dist = Infinity;
    for (var i = 0; i < dens.length; i++) {
      var dd = Math.abs(Math.log(dens[i][0] / ns));
      if (dd < dist) { dist = dd; best = dens[i][1]; }
    }
    return best;
  }

  // The count of the bin holding ns (0 in none).
  function countAt(bins, ns) {
    for (var i = 0; i < bins.length; i++) if (ns >= bins[i][0] && ns < bins[i][1]) return bins[i][2];
    return 0;
  }

  // A tick's step on the count axis: 1, 2 or 5 times a power of ten, about
  // five of them up to max, whole counts.
  function countStep(max) {
    var raw = max / 5, mag = Math.pow(10, Math.floor(Math.log10(raw || 1))), norm = raw / mag;
    return Math.max(1, (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag);
  }

  var hists = [];        // every Hist on the page, redrawn at a new width
  var dragging = null;   // the Hist whose cut a drag is setting

  // One histogram in its box (div.hist, for the page to place), then
  // setData() and render(). opts, each may be left out:
  //   noun       what a duration is of, in the tooltip and axis titles
  //              ("span": "3 spans")
  //   height     the drawing's height (150), px
  //   minWidth, maxWidth  its width is its box's within these (300, none)
  //   titles     the axes' titles ("call duration (log scale)", "calls")
  //   emptyText  drawn when there are no bins ("no spans yet")
  //   onCut      function (ns): a click, or a drag let go, over the plot
  //              sets the cut at ns; the line follows the drag meanwhile
  function Hist(opts) {
    var self = this;
    opts = opts || {};
    this.noun = opts.noun || "span";
    this.height = opts.height || 150;
    this.minWidth = opts.minWidth || 300;
    this.maxWidth = opts.maxWidth || Infinity;
    this.titles = !!opts.titles;
    this.emptyText = opts.emptyText || "no spans yet";
    this.onCut = opts.onCut || null;
    this.data = { bins: [], density: [], modes: [], cuts: [], n: null };
    this.geo = null;       // the last drawing's axes, for the pointer
    this.dragNs = 0;       // > 0 while a drag sets the cut: where it is
    this.pending = null;   // the dragged cut's line in the drawing
    this.box = document.createElement("div");
    this.box.className = "hist" + (this.onCut ? " settable" : "");
    this.box.addEventListener("mousemove", function (ev) { self.hover(ev); });
    this.box.addEventListener("mouseleave", hideTip);
    if (this.onCut) {
      this.box.addEventListener("mousedown", function (ev) {
        var ns = ev.button ? 0 : self.nsAt(ev, false);
        if (!(ns > 0)) return;
        ev.preventDefault();  // no text selection while dragging
        dragging = self;
        self.dragNs = ns;
        self.showPending();
      });
    }
    hists.push(this);
  }

  // A drag's end: the cut set there (at: true), or none (Escape).
  function endDrag(at) {
    var h = dragging, ns = h ? h.dragNs : 0;
    if (!h) return;
    dragging = null;
    h.dragNs = 0;
    h.showPending();
    if (at && ns > 0) h.onCut(ns);
  }
  // on the document: a drag may end outside the chart (at its edge)
  document.addEventListener("mousemove", function (ev) {
    if (dragging) { dragging.dragNs = dragging.nsAt(ev, true) || dragging.dragNs; dragging.showPending(); }
  });
  document.addEventListener("mouseup", function () { endDrag(true); });
  document.addEventListener("keydown", function (ev) { if (ev.key === "Escape") endDrag(false); });

  // New data, kept until the next: d.bins, a latency histogram's bins
  // ([low ns, high ns, count], low to high); each of the rest may be left
  // out: d.density, [[ns, density relative to its peak], ...]; d.modes,
  // [{ns, share}, ...]; d.cuts, [{ns, label}, ...]; d.n, the number of
  // durations (a bin's share of them in its tooltip).
  Hist.prototype.setData = function (d) {
    d = d || {};
    var bins = logBins(d.bins);
    var lo = bins.length ? bins[0][0] : 0, hi = bins.length ? bins[bins.length - 1][1] : 0;
    function list(x) { return Array.isArray(x) ? x.filter(function (v) { return v && typeof v === "object"; }) : []; }
    this.data = {
      bins: bins,
      // the density inside the bins' span
      density: list(d.density).filter(function (p) {
        return Array.isArray(p) && isNum(p[0]) && isNum(p[1]) && p[0] >= lo && p[0] <= hi;
      }),
      modes: list(d.modes).filter(function (m) { return isNum(m.ns) && m.ns > 0; }),
      cuts: list(d.cuts).filter(function (c) { return isNum(c.ns) && c.ns > 0; }),
      n: isNum(d.n) ? d.n : null
    };
  };

  Hist.prototype.remove = function () {
    var self = this;
    hists = hists.filter(function (h) { return h !== self; });
    if (dragging === self) dragging = null;
    if (this.box.parentNode) this.box.parentNode.removeChild(this.box);
  };

  // Drawn at the box's own width (within minWidth and maxWidth), so that
  // text keeps its size on any screen.
  Hist.prototype.render = function () {
    var d = this.data, bins = d.bins, box = this.box;
    var W = Math.round(Math.max(this.minWidth, Math.min(this.maxWidth, box.clientWidth || 800))), H = this.height;
    var L = this.titles ? 56 : 44, R = this.titles ? 16 : 10, B = this.titles ? 44 : 26, T = d.modes.length ? 34 : 22;
    // as wide as its box, at most maxWidth (scaled meanwhile when the box
    // changes, redrawn once the width settles)
    var svg = svgEl("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": this.noun + " durations" });
    if (this.maxWidth < Infinity) svg.style.maxWidth = this.maxWidth + "px";
    this.pending = null;
    while (box.firstChild) box.removeChild(box.firstChild);
    box.appendChild(svg);
    if (!bins.length) {
      this.geo = null;
      svg.appendChild(svgEl("text", { x: L, y: H / 2, "class": "none" }, this.emptyText));
      return;
    }

    // x: the bins' span, and every cut's (lp-serve's threshold may be
    // outside it); modes are kept inside
    var lo = bins[0][0], hi = bins[bins.length - 1][1], bhi = hi;
    d.cuts.forEach(function (c) { lo = Math.min(lo, c.ns); hi = Math.max(hi, c.ns * 1.05); });
    var lx0 = Math.log10(lo), lx1 = Math.log10(hi);
    if (lx1 - lx0 < 1e-9) lx1 = lx0 + 1;
    var maxCount = Math.max.apply(null, bins.map(function (b) { return b[2]; })) || 1;
    function X(ns) { return L + (Math.log10(ns) - lx0) / (lx1 - lx0) * (W - L - R); }
    this.geo = { L: L, R: R, T: T, B: B, W: W, H: H, lx0: lx0, lx1: lx1, X: X };
    function Y(c) { return T + (1 - c / maxCount) * (H - T - B); }
    function clamp(ns) { return Math.min(bhi, Math.max(bins[0][0], ns)); }
    function add(parent, tag, attrs, text) { return parent.appendChild(svgEl(tag, attrs, text)); }

    // y grid: whole counts
    var step = countStep(maxCount);
    for (var c = 0; c <= maxCount; c += step) {
      add(svg, "line", { "class": "grid", x1: L, x2: W - R, y1: Y(c), y2: Y(c) });
      add(svg, "text", { x: L - 6, y: Y(c) + 4, "text-anchor": "end" }, fmtInt(c));
    }

    // x ticks at 1, 2 and 5 of each decade; labels on those that have room
    // (1, 2 and 5 only over less than 3.5 decades)
    var axis = add(svg, "g", { "class": "axis" });
    add(axis, "line", { x1: L, x2: W - R, y1: H - B, y2: H - B });
    var lastLabel = -1e9;
    for (var e = Math.floor(lx0); e <= Math.ceil(lx1); e++) {
      [1, 2, 5].forEach(function (m) {
        var ns = m * Math.pow(10, e);
        if (ns < lo || ns > hi) return;
        var x = X(ns), major = m === 1;
        add(axis, "line", { x1: x, x2: x, y1: H - B, y2: H - B + (major ? 7 : 4) });
        if (x - lastLabel > 44 && (major || lx1 - lx0 < 3.5)) {
          var edge = x > W - 28;  // at the right edge: ends there
          add(axis, "text", { x: edge ? W - 1 : x, y: H - B + 19, "text-anchor": edge ? "end" : "middle",
            "class": major ? "major" : "minor" }, fmtDur(ns));
          lastLabel = x;
        }
      });
    }
    if (this.titles) {
      var my = (T + H - B) / 2;
      add(svg, "text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle" }, this.noun + " duration (log scale)");
      add(svg, "text", { x: 14, y: my, "text-anchor": "middle", transform: "rotate(-90 14 " + my + ")" }, this.noun + "s");
    }

    // bars: one per bin, empty ones included so the bars match the bins
    bins.forEach(function (b, i) {
      var x0 = X(b[0]), x1 = X(b[1]);
      add(svg, "rect", { "class": "bar", "data-i": i, x: x0.toFixed(2), width: Math.max(0.5, x1 - x0 - 0.6).toFixed(2),
        y: Y(b[2]).toFixed(2), height: (H - B - Y(b[2])).toFixed(2) });
    });

    // the density, scaled so its peak meets the tallest bar
    var dens = d.density;
    if (dens.length > 1)
      add(svg, "path", { "class": "density", d: dens.map(function (p, i) {
        return (i ? "L" : "M") + X(p[0]).toFixed(1) + "," + Y(p[1] * maxCount).toFixed(1);
      }).join("") });

    // modes: a marker above the density's peak (or the bar's), with its share
    d.modes.forEach(function (m) {
      var x = X(clamp(m.ns)), y = Y(dens.length ? densityAt(dens, m.ns) * maxCount : countAt(bins, m.ns)) - 6;
      var g = add(svg, "g", { "class": "mode" });
      add(g, "path", { d: "M" + x + "," + y + "l-5,-8h10z" });
      add(g, "text", { x: x, y: y - 11, "text-anchor": "middle" }, fmtDur(m.ns) + (isNum(m.share) ? " · " + fmtPct(m.share) : ""));
    });

    // cuts: labelled dashed lines across the plot
    var self = this;
    d.cuts.forEach(function (cut) { self.cutLine(svg, X(cut.ns), (cut.label || "cut") + " " + fmtDur(cut.ns), "cut"); });
    this.showPending();
  };

  // A cut's line at x, labelled, in svg: from above the plot to the axis.
  Hist.prototype.cutLine = function (svg, x, label, cls) {
    var g = this.geo, right = x < g.W - 140;
    var e = svg.appendChild(svgEl("g", { "class": cls }));
    e.appendChild(svgEl("line", { x1: x, x2: x, y1: g.T - 14, y2: g.H - g.B }));
    e.appendChild(svgEl("text", { x: right ? x + 5 : x - 5, y: g.T - 4, "text-anchor": right ? "start" : "end" }, label));
    return e;
  };

  // The dragged cut's line where the drag is, none when there is none.
  Hist.prototype.showPending = function () {
    var svg = this.box.firstChild;
    if (this.pending && this.pending.parentNode) this.pending.parentNode.removeChild(this.pending);
    this.pending = null;
    if (this.dragNs > 0 && this.geo && svg)
      this.pending = this.cutLine(svg, this.geo.X(this.dragNs), "cut at " + fmtDur(this.dragNs), "cut pending");
  };

  // The duration under the pointer, or 0 off the plot (clamped: at its
  // nearest edge).
  Hist.prototype.nsAt = function (ev, clamped) {
    var g = this.geo, svg = this.box.firstChild;
    if (!g || !svg) return 0;
    var r = svg.getBoundingClientRect();
    var x = (ev.clientX - r.left) * (r.width > 0 ? g.W / r.width : 1);
    if (clamped) x = Math.min(g.W - g.R, Math.max(g.L, x));
    if (x < g.L || x > g.W - g.R) return 0;
    return Math.pow(10, g.lx0 + (x - g.L) / (g.W - g.L - g.R) * (g.lx1 - g.lx0));
  };

  Hist.prototype.hover = function (ev) {
    var ns = this.nsAt(ev, false), bins = this.data.bins, n = this.data.n, lines = [];
    if (!(ns > 0)) return hideTip();
    for (var i = 0; i < bins.length; i++) {
      var b = bins[i];
      if (ns >= b[0] && ns < b[1]) {
        lines.push(fmtDur(b[3]) + " – " + fmtDur(b[1]),
          ["", fmtInt(b[2]), " " + this.noun + (b[2] === 1 ? "" : "s") + (n > 0 ? " (" + fmtPct(b[2] / n) + ")" : "")]);
        break;
      }
    }
    if (this.onCut) lines.push("click or drag: cut at " + fmtDur(this.dragNs > 0 ? this.dragNs : ns));
    if (!lines.length) return hideTip();
    showTip(null, lines, ev);
  };

  onWidth(function () { hists.forEach(function (h) { h.render(); }); });

  /* ---------- helpers.js: the small helpers every part of lp-serve's page
   * uses: $(id), values read defensively, weights, shares and durations as
   * text, elements filled with textContent only (the tooltip and the rest
   * both pages share are lib/output/page-common.js's). ---------- */

  function $(id) { return document.getElementById(id); }

  function arr(x) { return Array.isArray(x) ? x : []; }
  function obj(x) { return x && typeof x === "object" && !Array.isArray(x) ? x : {}; }


  // Weights are sample counts, or decayed (fractional) ones in half-life mode.
  function fmtNum(v) {
    if (!isNum(v)) return "–";
    if (Math.abs(v) >= 100 || v === Math.round(v)) return fmtInt(v);
    return v.toPrecision(3);
  }

  // Shares: a digit more than lp-report's page gives (page-common.js).
  var fmtPct = pctFormat(1);

  // A duration as lp-serve's settings take it ("10s", "500ms", "2m", "1500ns"):
  // the largest unit that divides it exactly.
  function durArg(ns) {
    if (!isNum(ns) || ns < 0) return "";
    var units = [[60e9, "m"], [1e9, "s"], [1e6, "ms"]];
    for (var i = 0; i < units.length; i++)
      if (ns >= units[i][0] && ns % units[i][0] === 0) return ns / units[i][0] + units[i][1];
    return Math.round(ns) + "ns";
  }

  // Elements are made here and filled with textContent only: frame names
  // may hold any character.
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function reEscape(s) { return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }

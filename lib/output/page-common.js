  /* ---------- page-common.js: what lp-report's and lp-serve's pages share
   * besides their flame graphs (lib/output/flamegraph.js): numbers,
   * durations and changes of share as text, the tooltip every chart
   * shows, a canvas sized for the screen's pixels, redrawing at a new
   * width (their latency histograms are lib/output/histogram.js's); put
   * in place of each page's LP-INCLUDE line naming it when lp builds it
   * (lib/page-include). ---------- */

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

  // Shares (0..1) as text with `more` digits more than lp-report's page
  // gives: 45%, 4.5%, 0.45%, 0.04% there (small ones keep a significant
  // digit, so 0.3% is not "0%"), 45.0%, 4.50% on lp-serve's (more: 1).
  function pctFormat(more) {
    return function (x) {
      if (!isNum(x)) return "–";
      var p = x * 100, a = Math.abs(p);
      if (a === 0) return "0%";
      return (a >= 10 ? p.toFixed(more) : a >= 1 ? p.toFixed(1 + more) : a >= 0.1 ? p.toFixed(2) : p.toPrecision(1)) + "%";
    };
  }

  // A change of share (0..1 each) in percentage points, signed.
  function fmtPts(d) {
    if (!isNum(d)) return "–";
    var p = d * 100;
    return (p > 0 ? "+" : p < 0 ? "−" : "±") + Math.abs(p).toFixed(Math.abs(p) >= 10 ? 0 : 1) + " pts";
  }

  // The tooltip (the page's #tooltip) beside the pointer, inside the
  // window: name (may be null) in monospace, then a line a string, or an
  // array of strings alternately plain and bold. Filled with textContent
  // only: frame names may hold any character.
  function showTip(name, lines, ev) {
    var tip = document.getElementById("tooltip");
    while (tip.firstChild) tip.removeChild(tip.firstChild);
    if (name !== null && name !== undefined) {
      var fn = tip.appendChild(document.createElement("span"));
      fn.className = "fn";
      fn.textContent = String(name);
    }
    lines.forEach(function (l) {
      var line = tip.appendChild(document.createElement("div"));
      [].concat(l).forEach(function (part, k) {
        var node = k % 2 ? document.createElement("b") : document.createTextNode("");
        node.textContent = String(part);
        line.appendChild(node);
      });
    });
    tip.style.display = "block";
    var w = tip.offsetWidth, h = tip.offsetHeight;
    var x = ev.clientX + 14, y = ev.clientY + 16;
    if (x + w > window.innerWidth - 4) x = Math.max(4, ev.clientX - w - 14);
    if (y + h > window.innerHeight - 4) y = Math.max(4, ev.clientY - h - 12);
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }
  function hideTip() { document.getElementById("tooltip").style.display = "none"; }

  // A canvas drawn at W x H CSS pixels, sharp at the screen's pixel ratio:
  // its context, cleared, its state reset, in CSS pixels.
  function sizeCanvas(canvas, W, H) {
    var ratio = window.devicePixelRatio || 1;
    canvas.width = Math.round(W * ratio);  // (even unchanged: resets the state)
    canvas.height = Math.round(H * ratio);
    canvas.style.height = H + "px";
    var ctx = canvas.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, W, H);
    return ctx;
  }

  // fn called once the window's width has changed and settled (canvases
  // are drawn at their laid-out width).
  function onWidth(fn) {
    var timer = 0, lastWidth = window.innerWidth;
    window.addEventListener("resize", function () {
      if (window.innerWidth === lastWidth) return;
      lastWidth = window.innerWidth;
      clearTimeout(timer);
      timer = setTimeout(fn, 100);
    });
  }

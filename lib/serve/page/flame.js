  /* ---------- flame.js: the Flame graph section: the whole view's
   * graph (lib/output/flamegraph.js draws it), the search over every
   * graph; and what makes a graph lp-serve's (liveGraph). ---------- */

  // One of lp-serve's flame graphs: weights decayed in half-life mode
  // (fractional), Alt-click to trace a frame's function.
  function liveGraph(title, small, missingText) {
    var g = new Graph(title, { small: small, missingText: missingText, weight: fmtNum, totalNote: " weight",
      onAlt: fillTrace, hint: "click: zoom · Alt-click: trace" });
    g.probe = null;  // the probe's name, for a probe's slow or fast graph
    return g;
  }

  var main = liveGraph("all samples in view", false);
  main.canvas.id = "flame-canvas";
  $("flame").appendChild(main.box);

  var searchRe = null;
  // Case-insensitive regex; an invalid one (e.g. "a::b(") is searched as text.
  function toRegExp(q) {
    $("search").classList.remove("bad");
    $("search").title = "";
    if (!q) return null;
    try { return new RegExp(q, "i"); } catch (e) {
      $("search").classList.add("bad");
      $("search").title = "not a valid regular expression: searched as text";
      return new RegExp(reEscape(q), "i");
    }
  }
  function showSearch() {
    $("search-status").textContent = searchRe ? "matched " + fmtPct(main.matchShare) + " of the view" : "";
  }
  function runSearch(q) {
    if ($("search").value !== q) $("search").value = q;
    searchRe = toRegExp(q);
    graphs.forEach(function (g) { g.search(searchRe); });
    showSearch();
  }
  (function () {
    var timer = 0;
    $("search").addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { runSearch($("search").value); }, 150);
    });
    $("reset-zoom").addEventListener("click", function () { main.zoomTo(0); });
  })();

  // Search the flame graphs for exactly this function, and show them.
  function findFunction(name) {
    runSearch("^" + reEscape(name) + "$");
    $("flame-section").scrollIntoView({ behavior: "smooth", block: "start" });
  }

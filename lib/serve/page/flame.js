  /* ---------- flame.js: the Flame graph section: the whole view's
   * graph, the search over every graph, Escape to zoom out. ---------- */

  var main = new Graph("all samples in view", false);
  main.canvas.id = "flame-canvas";
  main.onAlt = fillTrace;
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
    graphs.forEach(function (g) { g.re = searchRe; g.match(); g.render(); });
    showSearch();
  }
  (function () {
    var timer = 0;
    $("search").addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { runSearch($("search").value); }, 150);
    });
    $("reset-zoom").addEventListener("click", function () { main.zoomTo(0); });
    document.addEventListener("keydown", function (ev) {
      var tag = ev.target && ev.target.tagName;
      if (ev.key === "Escape" && tag !== "INPUT" && tag !== "SELECT") graphs.forEach(function (g) { if (g.zoomed) g.zoomTo(0); });
    });
  })();

  // Search the flame graphs for exactly this function, and show them.
  function findFunction(name) {
    runSearch("^" + reEscape(name) + "$");
    $("flame-section").scrollIntoView({ behavior: "smooth", block: "start" });
  }

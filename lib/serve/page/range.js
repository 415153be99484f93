  /* ---------- range.js: a heatmap range: GET /range, its flame graph
   * and what it has more of than the view. ---------- */

  var rangeGraph = liveGraph("samples in the range", false, "no samples kept in this range");
  rangeGraph.box.classList.add("flame-range");
  $("range-flame").appendChild(rangeGraph.box);

  // Each function's total in a flame graph: its nodes' values, less those
  // below another node of that name (counted once a path, as lp-top's total).
  function funcTotals(root) {
    var tot = new Map(), onPath = new Map();
    if (!Array.isArray(root)) return tot;
    var stack = [[root, 1]];  // [node, 0: enter | 1: the root's children only | 2: leave]
    while (stack.length) {
      var top = stack.pop(), node = top[0], nm = node[0] === null || node[0] === undefined ? "" : String(node[0]);
      if (top[1] === 2) { onPath.set(nm, onPath.get(nm) - 1); continue; }
      var kids = arr(node[2]);
      if (top[1] === 0) {
        var v = +node[1], k = onPath.get(nm) || 0;
        if (!k) tot.set(nm, (tot.get(nm) || 0) + (v > 0 ? v : 0));
        onPath.set(nm, k + 1);
        stack.push([node, 2]);
      }
      for (var i = kids.length - 1; i >= 0; i--) if (Array.isArray(kids[i])) stack.push([kids[i], 0]);
    }
    return tot;
  }

  var DIFF_ROWS = 15;
  function rangeDiff(root, view) {
    var rv = +root[1], vv = Array.isArray(view) ? +view[1] : 0, vt = funcTotals(view), rows = [];
    if (!(rv > 0)) return rows;
    funcTotals(root).forEach(function (v, nm) {
      var a = v / rv, b = vv > 0 ? (vt.get(nm) || 0) / vv : 0;
      if (a - b > 0) rows.push([nm, a, b, a - b]);
    });
    rows.sort(function (x, y) { return y[3] - x[3] || (x[0] < y[0] ? -1 : 1); });
    return rows.slice(0, DIFF_ROWS);
  }

  function fmtPoints(d) {
    var p = d * 100;
    return "+" + (p >= 10 ? p.toFixed(1) : p >= 0.1 ? p.toFixed(2) : p.toPrecision(1));
  }

  function showRange(from, to, root, failed) {
    var ok = Array.isArray(root);
    api.range = { from: from, to: to, root: ok ? root : null };
    $("range").hidden = false;
    var span = fmtSecs(from) + " to " + fmtSecs(to);
    $("range-title").textContent = failed ? "samples from " + span + ": " + failed :
      ok ? "samples from " + span + ": " + fmtNum(+root[1]) : "no samples kept from " + span;
    rangeGraph.re = searchRe;
    rangeGraph.setData(ok ? root : null);
    rangeGraph.render();
    var tbody = $("range-diff").tBodies[0], rows = ok ? rangeDiff(root, obj(api.last).flame) : [];
    clear(tbody);
    rows.forEach(function (d) {
      var tr = el("tr"), fn = el("button", "fn", d[0]);
      fn.type = "button";
      fn.title = "search the flame graphs for it";
      fn.addEventListener("click", function () { runSearch("^" + reEscape(d[0]) + "$"); });
      tr.appendChild(el("td", "name")).appendChild(fn);
      tr.appendChild(el("td", null, fmtPct(d[1])));
      tr.appendChild(el("td", null, fmtPct(d[2])));
      tr.appendChild(el("td", null, fmtPoints(d[3])));
      tbody.appendChild(tr);
    });
    if (!rows.length) {
      var td = el("td", "empty left", ok ? "nothing is more common here than in the view" : "–");
      td.colSpan = 4;
      tbody.appendChild(el("tr")).appendChild(td);
    }
  }

  // GET /range; resolves to its HTTP status (0: no reply). A reply to an
  // earlier selection, or one cleared since, is dropped.
  var rangeSeq = 0;
  function selectRange(fromNs, toNs) {
    var from = Math.round(+fromNs), to = Math.round(+toNs), seq = ++rangeSeq;
    if (!isNum(from) || !isNum(to)) { setStatus("range: from and to are times in ns", "err"); return Promise.resolve(0); }
    sel = { from: from, to: to };
    redrawHeat();
    $("range").hidden = false;
    $("range-title").textContent = "samples from " + fmtSecs(from) + " to " + fmtSecs(to) + ": ...";
    return fetch(url("/range") + "&from=" + String(from) + "&to=" + String(to), { cache: "no-store" }).then(function (r) {
      return r.text().then(function (text) {
        if (seq !== rangeSeq) return r.status;
        var root = null, failed = "";
        if (r.ok) {
          try { root = JSON.parse(text); } catch (e) { failed = "not JSON: " + e.message; }
          if (!failed && !Array.isArray(root)) failed = "not a flame graph node";
        } else if (r.status !== 404) failed = r.status + " " + text.replace(/\s+$/, "").slice(0, 300);
        if (failed) setStatus("/range: " + failed, "err");
        showRange(from, to, failed ? null : root, failed);
        return r.status;
      });
    }, function (e) {
      var msg = "request failed: " + (e && e.message ? e.message : e);
      if (seq === rangeSeq) { setStatus("/range: " + msg, "err"); showRange(from, to, null, msg); }
      return 0;
    });
  }
  api.selectRange = selectRange;

  $("range-clear").addEventListener("click", function () {
    rangeSeq++;
    sel = null;
    api.range = null;
    $("range").hidden = true;
    redrawHeat();
  });

  /* ---------- funcs.js: the Hottest functions section: the functions
   * table and its filter, the top stacks. ---------- */

  // Rows are kept and refilled, not rebuilt, so a click is not lost to a
  // snapshot arriving between mouse down and up.
  function syncRows(tbody, n, make) {
    while (tbody.rows.length < n) tbody.appendChild(make());
    while (tbody.rows.length > n) tbody.removeChild(tbody.lastChild);
  }

  function weightOf(s) {
    var w = obj(s.stats).weight;
    if (isNum(w) && w > 0) return w;
    return main.total > 0 ? main.total : 0;
  }

  function makeFuncRow() {
    var tr = el("tr"), fn = el("button", "fn"), tr2 = el("button", "link trace", "trace");
    fn.type = tr2.type = "button";
    fn.title = "find in the flame graph";
    tr2.title = "trace this function (fills the Digging field)";
    fn.addEventListener("click", function () { findFunction(tr.lpName); });
    tr2.addEventListener("click", function () { fillTrace(tr.lpName); });
    tr.appendChild(el("td"));
    tr.appendChild(el("td"));
    tr.appendChild(el("td", "name")).appendChild(fn);
    tr.appendChild(el("td", "left"));
    tr.appendChild(el("td")).appendChild(tr2);
    return tr;
  }

  function renderFuncs(s) {
    var all = arr(s.funcs).filter(Array.isArray), W = weightOf(s);
    var q = $("funcs-filter").value.trim().toLowerCase();
    var rows = q ? all.filter(function (f) {
      return (String(f[0]) + " " + (f[1] === null || f[1] === undefined ? "" : String(f[1]))).toLowerCase().indexOf(q) >= 0;
    }) : all;
    var tbody = $("funcs").tBodies[0];
    syncRows(tbody, rows.length, makeFuncRow);
    rows.forEach(function (f, i) {
      var tr = tbody.rows[i], name = f[0] === null || f[0] === undefined ? "" : String(f[0]);
      tr.lpName = name;
      tr.cells[0].textContent = W > 0 && isNum(f[2]) ? fmtPct(f[2] / W) : "–";
      tr.cells[1].textContent = W > 0 && isNum(f[3]) ? fmtPct(f[3] / W) : "–";
      tr.cells[2].firstChild.textContent = name;
      tr.cells[3].textContent = f[1] === null || f[1] === undefined ? "" : String(f[1]);
    });
    $("funcs-count").textContent = q ? rows.length + " of " + all.length + " functions" : all.length + " functions";
  }
  $("funcs-filter").addEventListener("input", function () { if (api.last) renderFuncs(api.last); });

  var STACK_CHARS = 200;
  function renderStacks(s) {
    var rows = arr(s.stacks).filter(Array.isArray), W = weightOf(s), tbody = $("stacks").tBodies[0];
    syncRows(tbody, rows.length, function () {
      var tr = el("tr");
      tr.appendChild(el("td"));
      tr.appendChild(el("td", "stack")).appendChild(el("code"));
      return tr;
    });
    rows.forEach(function (r, i) {
      var tr = tbody.rows[i], stack = r[0] === null || r[0] === undefined ? "" : String(r[0]);
      tr.cells[0].textContent = W > 0 && isNum(r[1]) ? fmtPct(r[1] / W) : "–";
      // long stacks keep their leaf end
      tr.cells[1].firstChild.textContent = stack.length > STACK_CHARS ? "..." + stack.slice(stack.length - STACK_CHARS + 3) : stack;
      tr.cells[1].title = stack;
    });
  }

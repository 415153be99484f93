  /* ---------- discovery.js: the Digging section's discovery (GET
   * /discover): functions matching a glob, a function's lines and where a
   * probe can go, its loops, blocks and inlined calls, a line's
   * variables. ---------- */

  // GET /discover; resolves to {status, text} (status 0: no reply), never rejects.
  function discover(what, arg) {
    what = String(what); arg = arg === null || arg === undefined ? "" : String(arg);
    var path = "/discover " + what + " " + arg;
    setStatus("GET " + path + " ...", "");
    return fetch(url("/discover") + "&what=" + encodeURIComponent(what) + "&arg=" + encodeURIComponent(arg),
      { cache: "no-store" }).then(function (r) {
      return r.text().then(function (text) {
        var t = text.replace(/\s+$/, "");
        if (r.ok) setStatus(path + ": " + (t ? t.split("\n").length : 0) + " lines", "ok");
        else setStatus(path + ": " + r.status + (r.statusText ? " " + r.statusText : "") +
          (t ? ": " + (t.length > 600 ? t.slice(0, 600) + "..." : t) : ""), "err");
        return { status: r.status, text: text };
      });
    }, function (e) {
      var msg = String(e && e.message ? e.message : e);
      setStatus(path + ": request failed: " + msg, "err");
      return { status: 0, text: msg };
    });
  }
  api.discover = discover;

  // A reply's lines, each split at its tabs; the last field keeps any tabs
  // beyond n - 1 (source text has its own), and may be empty (a blank line).
  function tabLines(text, n) {
    return text.split("\n").filter(function (l) { return l !== "" && l !== "\r"; }).map(function (l) {
      var f = l.replace(/\r$/, "").split("\t");
      return f.length > n ? f.slice(0, n - 1).concat([f.slice(n - 1).join("\t")]) : f;
    });
  }
  function button(cls, text, title, onclick) {
    var b = el("button", cls, text);
    b.type = "button";
    if (title) b.title = title;
    b.addEventListener("click", onclick);
    return b;
  }
  function dash(x) { return x === "-" ? "" : x; }
  function addProbe(spec) { return post("/control", { command: "add " + spec }); }

  // list: func\tNAME\tMODULE\tFILE:LINE\tNARGS\tARGS\tRETURNS\tNOTE (other lines as they are)
  var listSeq = 0;
  $("dig-search").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var pattern = $("dig-pattern").value.trim(), seq = ++listSeq;
    if (!pattern) { setStatus("enter a glob of function names, e.g. handle*", "err"); return; }
    discover("list", pattern).then(function (r) {
      if (seq !== listSeq || r.status !== 200) return;
      var tbody = $("dig-funcs").tBodies[0], n = 0;
      clear(tbody);
      tabLines(r.text, 8).forEach(function (f) {
        var tr = tbody.appendChild(el("tr"));
        if (f[0] !== "func" || f.length < 8) {
          var td = tr.appendChild(el("td", "dig-plain", f.join("\t")));
          td.colSpan = 5;
          return;
        }
        var name = f[1], nm = tr.appendChild(el("td", "name"));
        n++;
        nm.appendChild(el("code", null, name));
        if (dash(f[7])) nm.appendChild(el("span", "note", " (" + f[7] + ")"));
        var src = tr.appendChild(el("td", null, dash(f[3])));
        src.title = f[2];  // the module
        tr.appendChild(el("td", "args", dash(f[5])));
        tr.appendChild(el("td", null, dash(f[6])));
        var acts = tr.appendChild(el("td"));
        acts.appendChild(button("dig-lines", "lines", "its source lines, and where a probe can go", function () { showLines(name); }));
        acts.appendChild(document.createTextNode(" "));
        acts.appendChild(button("dig-trace", "trace", "add a probe on it", function () { addProbe(name); }));
      });
      if (!tbody.rows.length) {
        var td = tbody.appendChild(el("tr")).appendChild(el("td", "empty", "no function matches"));
        td.colSpan = 5;
      }
      $("dig-funcs").hidden = false;
      $("dig-count").textContent = n + " function" + (n === 1 ? "" : "s");
    });
  });

  // lines: LINENO\tPROBE\tKIND\tCOUNT\tSOURCE TEXT (PROBE "-": none can go there)
  var KINDS = { emulated: "cheap", call: "cheap", nop: "cheap", stepped: "stepped" };
  var COSTS = { cheap: "about 1 µs a hit", stepped: "a single-step trap, about 10 µs a hit" };
  var linesSeq = 0;
  function showLines(name) {
    name = String(name).trim();
    if (!name) { setStatus("enter a function", "err"); return Promise.resolve(); }
    var seq = ++linesSeq;
    return discover("lines", name).then(function (r) {
      if (seq !== linesSeq || r.status !== 200) return;
      var tbody = $("dig-source").tBodies[0];
      clear(tbody);
      tabLines(r.text, 5).forEach(function (f) {
        var tr = tbody.appendChild(el("tr", "dig-line"));
        if (f.length < 5) {
          var td = tr.appendChild(el("td", "src dig-plain", f.join("\t")));
          td.colSpan = 4;
          return;
        }
        var probe = f[1], kind = f[2], count = +f[3] || 0;
        tr.setAttribute("data-line", f[0]);
        tr.appendChild(el("td", "ln", f[0]));
        var kd = tr.appendChild(el("td"));
        if (dash(kind)) {
          var cls = KINDS[kind] || "other", badge = kd.appendChild(el("span", "kind " + cls, kind));
          badge.title = (count > 1 ? count + " places on this line; the costliest: " : "") + kind +
            (COSTS[cls] ? ", " + COSTS[cls] : "");
        }
        var acts = tr.appendChild(el("td"));
        if (dash(probe)) {
          tr.classList.add("probed");
          acts.appendChild(button("dig-probe", "probe", "add a probe on " + probe, function () { addProbe(probe); }));
          acts.appendChild(document.createTextNode(" "));
          acts.appendChild(button("dig-vars", "vars", "the variables a probe on " + probe + " can capture",
            function () { showVars(probe); }));
        }
        tr.appendChild(el("td", "src", f[4]));
      });
      $("dig-source-title").textContent = "Lines of " + name;
      $("dig-vars-box").hidden = true;
      $("dig-lines-box").hidden = false;
      $("dig-lines-box").scrollIntoView({ behavior: "smooth", block: "nearest" });
    });
  }
  $("dig-lines-btn").addEventListener("click", function () { showLines($("trace-name").value); });

  // blocks: "loop\tN\tPARENT\tHEAD\tADDR\tLINES\tNBLOCKS\tPROBE" lines, then
  // "block\tN\tSTART\tEND\tLINES\tNEXT\tLOOP\tFLAGS" ones.
  var blocksSeq = 0;
  function showBlocks(name) {
    name = String(name).trim();
    if (!name) { setStatus("enter a function", "err"); return Promise.resolve(); }
    var seq = ++blocksSeq;
    return discover("blocks", name).then(function (r) {
      if (seq !== blocksSeq || r.status !== 200) return;
      var loops = $("dig-loops").tBodies[0], blocks = $("dig-blocks").tBodies[0], depth = {};
      clear(loops);
      clear(blocks);
      String(r.text).split("\n").forEach(function (line) {
        var f = line.split("\t");
        if (f[0] === "loop" && f.length >= 8) {
          depth[f[1]] = dash(f[2]) && depth[f[2]] !== undefined ? depth[f[2]] + 1 : 0;
          var tr = loops.appendChild(el("tr", "dig-loop"));
          tr.setAttribute("data-loop", f[1]);
          var label = el("td", "left", "loop " + f[1] + (dash(f[2]) ? " in loop " + f[2] : ""));
          label.style.paddingLeft = (10 + 16 * depth[f[1]]) + "px";
          tr.appendChild(label);
          tr.appendChild(el("td", "left", f[5]));
          tr.appendChild(el("td", null, f[6]));
          tr.appendChild(el("td", "left", f[7]));
          var acts = tr.appendChild(el("td"));
          if (dash(f[7]))
            acts.appendChild(button("dig-loop-probe", "probe", "count its iterations: add " + f[7],
              function () { addProbe(f[7]); }));
        } else if (f[0] === "block" && f.length >= 8) {
          var tb = blocks.appendChild(el("tr", "dig-block"));
          tb.setAttribute("data-block", f[1]);
          [f[1], f[4], f[5], f[6], f[7]].forEach(function (v, i) {
            tb.appendChild(el("td", i === 0 || i === 3 ? null : "left", v));
          });
        }
      });
      renderStructure(r.text, name);
      $("dig-blocks-title").textContent = "Loops and blocks of " + name;
      $("dig-blocks-box").hidden = false;
      $("dig-blocks-box").scrollIntoView({ behavior: "smooth", block: "nearest" });
    });
  }
  $("dig-blocks-btn").addEventListener("click", function () { showBlocks($("trace-name").value); });

  // The structure in a blocks reply, as an indented tree:
  // "inline\tN\tPARENT\tDEPTH\tNAME\tCALL\tRANGES\tPROBE" (an inlined call,
  // PROBE the point that traces it) and
  // "scope\tN\tPARENT\tDEPTH\tLINES\tRANGES\tVARS\tPROBE" (a { } block, PROBE
  // the line where --vars lists its variables).  fn: the function shown.
  function renderStructure(text, fn) {
    var tbody = $("dig-structure").tBodies[0];
    clear(tbody);
    String(text).split("\n").forEach(function (line) {
      var f = line.split("\t");
      if ((f[0] !== "inline" && f[0] !== "scope") || f.length < 8) return;
      var inl = f[0] === "inline", probe = f[7];
      var tr = tbody.appendChild(el("tr", inl ? "dig-inline" : "dig-scope"));
      tr.setAttribute("data-node", f[1]);
      tr.setAttribute("data-depth", f[3]);
      var label = tr.appendChild(el("td", "left"));
      label.style.paddingLeft = (10 + 16 * Math.max(0, (+f[3] || 1) - 1)) + "px";
      if (inl) {
        label.appendChild(document.createTextNode("inlined "));
        label.appendChild(el("code", null, f[4]));
      } else {
        label.textContent = "block";
      }
      tr.appendChild(el("td", "left", inl ? (dash(f[5]) ? "called at " + f[5] : "") : dash(f[4])));
      tr.appendChild(el("td", "left", dash(f[inl ? 6 : 5]))).title = "link-time addresses, [start, end)";
      tr.appendChild(el("td", "left", inl ? "" : dash(f[6]).split(",").join(", ")));
      var acts = tr.appendChild(el("td"));
      if (!dash(probe)) return;
      if (inl)
        acts.appendChild(button("dig-inline-probe", "trace", "an event each time this inlined call runs: add " + probe,
          function () { addProbe(probe); }));
      else
        acts.appendChild(button("dig-scope-vars", "vars", "the variables a probe on " + probe + " can capture",
          function () {
            showLines(fn).then(function () { return showVars(probe); }).then(function () {
              $("dig-vars-box").scrollIntoView({ behavior: "smooth", block: "nearest" });
            });
          }));
    });
    if (!tbody.rows.length) {
      var td = tbody.appendChild(el("tr")).appendChild(el("td", "empty", "no inlined calls, no blocks"));
      td.colSpan = 5;
    }
  }

  // vars: ADDR\tFUNC\tKIND\tNAME\tTYPE\tLOCATION\tAVAILABLE (one a variable a place)
  var varsSeq = 0, varsProbe = "";
  function showVars(probe) {
    var seq = ++varsSeq;
    return discover("vars", probe).then(function (r) {
      if (seq !== varsSeq || r.status !== 200) return;
      varsProbe = probe;
      var tbody = $("dig-varlist").tBodies[0];
      clear(tbody);
      tabLines(r.text, 7).forEach(function (f) {
        var tr = tbody.appendChild(el("tr"));
        if (f.length < 7) {
          var td = tr.appendChild(el("td", "dig-plain", f.join("\t")));
          td.colSpan = 7;
          return;
        }
        var box = el("input", "dig-var"), yes = /^yes/.test(f[6]);
        box.type = "checkbox";
        box.value = f[3];
        box.disabled = !yes;
        box.setAttribute("aria-label", "capture " + f[3]);
        tr.title = f[0];  // the place's address
        tr.appendChild(el("td")).appendChild(box);
        tr.appendChild(el("td")).appendChild(el("code", null, f[3]));
        [f[2], f[4], f[1], f[5], f[6]].forEach(function (x) { tr.appendChild(el("td", null, x)); });
      });
      if (!tbody.rows.length) {
        var td = tbody.appendChild(el("tr")).appendChild(el("td", "empty", "no variables here"));
        td.colSpan = 7;
      }
      $("dig-vars-title").textContent = "Variables at " + probe;
      $("dig-vars-box").hidden = false;
    });
  }
  $("dig-probe-vars").addEventListener("click", function () {
    var names = [];
    Array.prototype.forEach.call($("dig-varlist").querySelectorAll("input.dig-var"), function (b) {
      if (b.checked && names.indexOf(b.value) < 0) names.push(b.value);
    });
    if (!varsProbe || !names.length) { setStatus("tick the variables to capture first", "err"); return; }
    addProbe(varsProbe + "(" + names.join(",") + ")");
  });

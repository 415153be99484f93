  /* ---------- probes.js: the Probes section: a panel a probe (stats,
   * histogram, cut and split forms, slow and fast flame graphs, what
   * separates them), following the snapshot's list. ---------- */

  // One probe's panel: stats, histogram, cut form, slow and fast flame graphs.
  var NOJOIN = "no samples joined to these spans (feed lp-join's output)";
  function Probe(name) {
    var self = this;
    this.name = name;
    this.box = el("div", "probe");
    this.box.setAttribute("data-probe", name);
    this.box.appendChild(el("h3", "fn", name));
    this.stats = this.box.appendChild(el("div", "pstats"));
    var top = this.box.appendChild(el("div", "probe-top"));
    // its histogram (lib/output/histogram.js): a click or a drag cuts there
    this.hist = new Hist({ noun: "span", onCut: function (ns) {
      post("/settings", { probe: self.name, threshold: Math.max(1, Math.round(ns)) + "ns" });
    } });
    top.appendChild(el("div", "hist-wrap")).appendChild(this.hist.box);

    var form = top.appendChild(el("div", "cutform"));
    this.pct = el("input", "pct");
    this.pct.type = "number"; this.pct.min = "1"; this.pct.max = "99.9"; this.pct.step = "0.1";
    this.pct.setAttribute("aria-label", "percentile");
    this.thr = el("input", "thr");
    this.thr.type = "text"; this.thr.placeholder = "10ms"; this.thr.spellcheck = false;
    this.thr.setAttribute("aria-label", "threshold");
    var cutPct = el("button", "cut-pct", "Cut"), cutThr = el("button", "cut-thr", "Cut");
    cutPct.type = cutThr.type = "button";
    form.appendChild(el("label", null, "percentile"));
    form.appendChild(this.pct);
    form.appendChild(cutPct);
    form.appendChild(el("label", null, "threshold"));
    form.appendChild(this.thr);
    form.appendChild(cutThr);
    // or by a captured value: the spans whose values meet KEY OP VALUE
    // against the others (lp-split --where)
    this.whereIn = el("input", "where");
    this.whereIn.type = "text"; this.whereIn.placeholder = "arg0>100"; this.whereIn.spellcheck = false;
    this.whereIn.setAttribute("aria-label", "where");
    var cutWhere = el("button", "cut-where", "Split");
    cutWhere.type = "button";
    form.appendChild(el("label", null, "where"));
    form.appendChild(this.whereIn);
    form.appendChild(cutWhere);
    this.whereIn.addEventListener("keydown", function (ev) { if (ev.key === "Enter") cutWhere.click(); });
    cutWhere.addEventListener("click", function () {
      var w = self.whereIn.value.trim();
      if (!w) { setStatus("where: KEY=VALUE, KEY!=VALUE, KEY<N, KEY>=N ...", "err"); return; }
      post("/settings", { probe: self.name, where: w });
    });
    this.cutinfo = form.appendChild(el("div", "cutinfo"));
    // the inputs follow the snapshots until the user types in them
    this.dirty = false;
    [this.pct, this.thr].forEach(function (inp) {
      inp.addEventListener("input", function () { self.dirty = true; });
      inp.addEventListener("keydown", function (ev) { if (ev.key === "Enter") (inp === self.pct ? cutPct : cutThr).click(); });
    });
    cutPct.addEventListener("click", function () {
      var p = parseFloat(self.pct.value);
      if (!(p >= 1 && p <= 99.9)) { setStatus("percentile: a number from 1 to 99.9", "err"); return; }
      post("/settings", { probe: self.name, percentile: self.pct.value.trim() }).then(function (r) { if (r.ok) self.dirty = false; });
    });
    cutThr.addEventListener("click", function () {
      var t = self.thr.value.trim();
      if (!t) { setStatus("threshold: a duration, e.g. 10ms", "err"); return; }
      post("/settings", { probe: self.name, threshold: t }).then(function (r) { if (r.ok) self.dirty = false; });
    });

    var pair = this.box.appendChild(el("div", "pair"));
    this.slow = liveGraph("slow spans", true, NOJOIN);
    this.fast = liveGraph("fast spans", true, NOJOIN);
    this.slow.peers = this.fast.peers = [this.slow, this.fast];
    this.slow.probe = this.fast.probe = name;
    this.slow.re = this.fast.re = searchRe;
    this.slow.box.classList.add("flame-slow");
    this.fast.box.classList.add("flame-fast");
    pair.appendChild(this.slow.box);
    pair.appendChild(this.fast.box);

    // What tells the slow spans from the fast (lp-split's ranking).
    var sep = this.box.appendChild(el("div", "separates"));
    sep.appendChild(el("h4", null, "what separates slow spans from fast"));
    var table = sep.appendChild(el("table", "septable"));
    var head = table.appendChild(el("thead")).appendChild(el("tr"));
    ["", "slow", "fast", "p", ""].forEach(function (h, i) { head.appendChild(el("th", i ? null : "name", h)); });
    this.sepBody = table.appendChild(el("tbody"));
    this.sepNone = sep.appendChild(el("div", "empty", "nothing reached, called or captured tells them apart (trace lines or calls inside it)"));
  }

  // One ranked feature: "reached x.c:9", "called lookup", or a value.
  function sepLabel(r) {
    return (typeof r[0] === "string" ? r[0] + " " : "") + String(r[1]);
  }
  function sepRate(rate, n) {
    return isNum(rate) ? fmtPct(rate) + " (" + fmtInt(n) + ")" : "";
  }

  Probe.prototype.update = function (p) {
    var cut = obj(p.cut);
    this.stats.textContent = fmtInt(p.spans) + " spans · p50 " + fmtDur(p.p50) + " · p90 " + fmtDur(p.p90) +
      " · p99 " + fmtDur(p.p99) + " · max " + fmtDur(p.max) +
      (isNum(p.lp_share) && p.lp_ns > 0 ? " · lp's own " + fmtPct(p.lp_share) + " of their time" : "");
    var how = isNum(cut.percentile) ? "p" + cut.percentile : isNum(cut.threshold_ns) ? "threshold" : "cut";
    var took = typeof cut.took === "string" ? cut.took : null;
    var where = typeof cut.where === "string" ? cut.where : null;
    this.cutinfo.textContent = took ? "split: the spans that reached or called " + took + ", and the others" +
      " (a percentile or threshold cuts by duration again)"
      : where ? "split: the spans whose values meet " + where + ", and the others" +
      " (a percentile or threshold cuts by duration again)"
      : isNum(cut.at_ns) ? "slow spans: longer than " + how + " = " + fmtDur(cut.at_ns) +
      ". Click or drag on the histogram to cut there." : "no cut yet";
    var focus = document.activeElement;
    if (!this.dirty && focus !== this.pct && focus !== this.thr) {
      this.pct.value = isNum(cut.percentile) ? String(cut.percentile) : "";
      this.thr.value = isNum(cut.threshold_ns) ? durArg(cut.threshold_ns) : "";
    }
    // the cut on the histogram, named as it was set (a split has none)
    this.hist.setData({ bins: p.hist, n: p.spans, cuts: isNum(cut.at_ns) ? [{ ns: cut.at_ns, label: how }] : [] });
    this.hist.render();
    this.slow.h3.textContent = (took ? "reached " + took : where ? where : "slow spans") + " · " + fmtInt(p.slow_samples) + " samples";
    this.fast.h3.textContent = (took || where ? "the others" : "fast spans") + " · " + fmtInt(p.fast_samples) + " samples";
    this.slow.setData(p.slow);
    this.fast.setData(p.fast);
    this.slow.render();
    this.fast.render();
    var rows = arr(p.separates), body = this.sepBody;
    clear(body);
    var self = this;
    rows.forEach(function (r) {
      r = arr(r);
      var tr = body.appendChild(el("tr"));
      var split = el("td");
      tr.appendChild(el("td", "name", sepLabel(r)));
      tr.appendChild(el("td", null, sepRate(r[4], r[2])));
      tr.appendChild(el("td", null, sepRate(r[5], r[3])));
      // p from its log10 (a double's exponent ends near -308)
      tr.appendChild(el("td", null, !isNum(r[6]) ? "" : r[6] > -300 ? Math.pow(10, r[6]).toExponential(1)
                                                        : "1e" + Math.round(r[6])));
      // A branch or a call: split the spans on it (lp-split --took).
      if (r[0] === "reached" || r[0] === "called") {
        var b = split.appendChild(el("button", "link sep-split", "split on it"));
        b.type = "button";
        b.addEventListener("click", function () { post("/settings", { probe: self.name, took: String(r[1]) }); });
      } else if (typeof r[1] === "string" && /^[^=<>!]+=/.test(r[1])) {
        // a captured value: split the spans on it (lp-split --where)
        var v = split.appendChild(el("button", "link sep-split", "split on it"));
        v.type = "button";
        v.addEventListener("click", function () { post("/settings", { probe: self.name, where: String(r[1]) }); });
      }
      tr.appendChild(split);
    });
    this.sepNone.style.display = rows.length ? "none" : "";
  };

  Probe.prototype.remove = function () {
    var s = this.slow, f = this.fast;
    graphs = graphs.filter(function (g) { return g !== s && g !== f; });
    this.hist.remove();
    if (this.box.parentNode) this.box.parentNode.removeChild(this.box);
  };

  var probes = new Map();  // name -> Probe, in the snapshot's order
  function renderProbes(s) {
    var list = arr(s.probes).filter(function (p) { return p && typeof p === "object"; });
    var seen = new Map(), box = $("probes");
    list.forEach(function (p) {
      var name = p.name === null || p.name === undefined ? "" : String(p.name);
      if (seen.has(name)) return;  // one panel a name
      var pr = probes.get(name) || new Probe(name);
      seen.set(name, pr);
      box.appendChild(pr.box);  // appending again keeps the snapshot's order
      pr.update(p);
    });
    probes.forEach(function (pr, name) { if (!seen.has(name)) pr.remove(); });
    probes = seen;
    $("probes-empty").hidden = list.length > 0;
  }

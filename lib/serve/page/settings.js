  /* ---------- settings.js: the View section: mode and duration, the
   * host, sent to POST /settings. ---------- */

  // The form follows the snapshots until the user edits it; Apply hands it back.
  var settingsDirty = false;
  function renderSettings(s) {
    var mode = s.mode, what;
    if (mode === "window") what = "showing the last " + fmtDur(s.window_ns);
    else if (mode === "half-life") what = "showing every sample, weights halving every " + fmtDur(s.half_life_ns);
    else if (mode === "all") what = "showing every sample";
    else what = "mode " + (mode === undefined || mode === null ? "unknown" : String(mode));
    if (isNum(s.end_ns)) what += ", up to " + fmtDur(s.end_ns) + " of stream time";
    $("view-info").textContent = what;
    renderHosts(s);
    var focus = document.activeElement;
    if (settingsDirty || focus === $("mode") || focus === $("duration")) return;
    if (mode === "window" || mode === "half-life") $("mode").value = mode;
    fillDuration();
  }
  function fillDuration() {
    var s = obj(api.last), ns = $("mode").value === "window" ? s.window_ns : s.half_life_ns;
    if (isNum(ns)) $("duration").value = durArg(ns);
  }
  // The inputs' hosts (their headers' host=), when there are several: one
  // alone, or all merged.
  function renderHosts(s) {
    var names = [];
    arr(s.inputs).forEach(function (i) {
      var h = obj(i).host;
      if (typeof h === "string" && names.indexOf(h) < 0) names.push(h);
    });
    var sel = $("host"), show = names.length > 1 || typeof s.host === "string";
    sel.hidden = $("host-label").hidden = !show;
    if (!show || document.activeElement === sel) return;
    while (sel.options.length > 1) sel.remove(1);
    names.forEach(function (h) {
      var o = el("option", null, h);
      o.value = h;
      sel.appendChild(o);
    });
    sel.value = typeof s.host === "string" ? s.host : "";
  }
  $("host").addEventListener("change", function () { post("/settings", { host: $("host").value }); });
  $("mode").addEventListener("change", function () { settingsDirty = true; fillDuration(); });
  $("duration").addEventListener("input", function () { settingsDirty = true; });
  $("settings").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var mode = $("mode").value, dur = $("duration").value.trim();
    if (!dur) { setStatus("enter a duration, e.g. 10s, 500ms or 2m", "err"); return; }
    var fields = mode === "window" ? { mode: "window", window: dur } : { mode: "half-life", half_life: dur };
    post("/settings", fields).then(function (r) { if (r.ok) settingsDirty = false; });
  });

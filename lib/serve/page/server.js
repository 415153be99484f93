  /* ---------- server.js: talking to lp-serve: the access token, the
   * status line under the header, POST with a form body, and
   * window.lpServe, what tests drive. ---------- */

  var token = "";
  try { token = new URLSearchParams(window.location.search).get("token") || ""; } catch (e) { token = ""; }
  function url(path) { return path + "?token=" + encodeURIComponent(token); }

  var statusTimer = 0;
  function setStatus(text, kind) {
    var s = $("status");
    s.textContent = text;
    s.className = kind || "";
    clearTimeout(statusTimer);
    if (kind === "ok") statusTimer = setTimeout(function () { s.className = ""; }, 4000);
  }

  // fields: an object (keys in order) or a ready-made body string.
  // Spaces become %20, which any form decoder reads, not only a full one.
  function encodeForm(fields) {
    if (typeof fields === "string") return fields;
    return Object.keys(obj(fields)).map(function (k) {
      return encodeURIComponent(k) + "=" + encodeURIComponent(String(fields[k]));
    }).join("&");
  }

  // Resolves to {status, ok, text}; never rejects (a network failure is status 0).
  function post(path, fields) {
    var body = encodeForm(fields);
    setStatus("POST " + path + " " + body + " ...", "");
    return fetch(url(path), {
      method: "POST", cache: "no-store", body: body,
      headers: { "Content-Type": "application/x-www-form-urlencoded" }
    }).then(function (r) {
      return r.text().then(function (text) {
        text = text.replace(/\s+$/, "");
        setStatus(path + ": " + r.status + (r.statusText ? " " + r.statusText : "") +
          (text ? ": " + (text.length > 600 ? text.slice(0, 600) + "..." : text) : ""), r.ok ? "ok" : "err");
        return { status: r.status, ok: r.ok, text: text };
      });
    }, function (e) {
      setStatus(path + ": request failed: " + (e && e.message ? e.message : e), "err");
      return { status: 0, ok: false, text: String(e && e.message ? e.message : e) };
    });
  }

  var api = { last: null, renders: 0, post: post, errors: [], range: null };
  window.lpServe = api;
  // graphs: each flame graph's state, read when asked (main first, then each
  // probe's slow and fast, then the heatmap range's while one is shown)
  Object.defineProperty(api, "graphs", { enumerable: true, get: function () {
    var list = graphs.filter(function (g) { return g !== rangeGraph; });
    if (api.range) list.push(rangeGraph);
    return list.map(function (g) {
      return { title: g.title, probe: g.probe, nodes: g.t.n, drawn: g.drawn, zoomed: g.zoomPath.slice(),
        matched: g.matches ? g.matchShare : null };
    });
  } });
  // hists: each probe's latency histogram as drawn (lib/output/histogram.js):
  // its bars, and its cuts' labels
  Object.defineProperty(api, "hists", { enumerable: true, get: function () {
    return Array.from(probes.values()).map(function (p) {
      return { probe: p.name, bars: p.hist.box.querySelectorAll(".bar").length,
        cuts: Array.from(p.hist.box.querySelectorAll(".cut:not(.pending) text")).map(function (t) { return t.textContent; }) };
    });
  } });

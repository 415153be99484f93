  /* ---------- live.js: a snapshot drawn (each section by its
   * own function), redrawn at a new width, and where snapshots come from:
   * GET /snapshot, then the stream of GET /events. ---------- */

  function render(s) {
    if (!s || typeof s !== "object" || Array.isArray(s)) { setStatus("snapshot: not a JSON object", "err"); return; }
    api.last = s;
    var errors = $("errors");
    clear(errors);
    var steps = [
      ["header", renderHeader], ["settings", renderSettings],
      ["flame", function (x) { main.setData(x.flame); main.render(); showSearch(); }],
      ["functions", renderFuncs], ["stacks", renderStacks], ["heatmap", renderHeat],
      ["probes", renderProbes], ["control", renderControl]];
    steps.forEach(function (step) {
      // one broken section must not take the rest of the page with it
      try { step[1](s); } catch (e) {
        errors.appendChild(el("div", "warning", "Page error in " + step[0] + ": " + (e && e.message)));
        api.errors.push(step[0] + ": " + (e && e.message));
        if (api.errors.length > 50) api.errors.shift();
        if (window.console) console.error(e);
      }
    });
    api.renders++;
    lastAt = Date.now();
    tickLive();
    document.body.dataset.ready = "1";
  }

  function receive(text, from) {
    var s;
    try { s = JSON.parse(text); } catch (e) { setStatus(from + ": not JSON: " + e.message, "err"); return; }
    render(s);
  }

  // Redrawn at a new width (the flame graphs and histograms redraw
  // themselves).
  onWidth(function () { if (api.last) renderHeat(api.last); });

  // EventSource reconnects by itself after an error; if it gives up
  // (CLOSED, e.g. the token was refused), try again every 5 s.
  var events = null;
  function openEvents() {
    if (typeof EventSource === "undefined") { streamState = "no live updates in this browser"; tickLive(); return; }
    events = new EventSource(url("/events"));
    streamState = "connecting";
    events.addEventListener("open", function () { streamState = "open"; tickLive(); });
    events.addEventListener("snapshot", function (ev) { receive(ev.data, "/events"); });
    events.onmessage = function (ev) { receive(ev.data, "/events"); };  // unnamed events, just in case
    events.addEventListener("error", function () {
      streamState = events.readyState === 2 ? "disconnected" : "reconnecting";
      tickLive();
      if (events.readyState === 2) { events = null; setTimeout(openEvents, 5000); }
    });
  }

  function start() {
    fetch(url("/snapshot"), { cache: "no-store" }).then(function (r) {
      return r.text().then(function (text) {
        if (!r.ok) setStatus("/snapshot: " + r.status + " " + text.slice(0, 300), "err");
        else receive(text, "/snapshot");
      });
    }).catch(function (e) {
      setStatus("/snapshot: " + (e && e.message ? e.message : e), "err");
    }).then(openEvents);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();

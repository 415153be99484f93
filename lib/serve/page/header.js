  /* ---------- header.js: the header: the title, the stats and whether
   * the event stream is live. ---------- */

  function setStat(id, value, bad) {
    var box = $(id);
    box.querySelector("b").textContent = value;
    box.classList.toggle("bad", !!bad);
  }

  function renderHeader(s) {
    var title = typeof s.title === "string" && s.title ? s.title : "lp-serve";
    $("title").textContent = title;
    document.title = title;
    var st = obj(s.stats);
    setStat("st-samples", fmtInt(st.in_view) + " / " + fmtInt(st.samples) + " samples");
    setStat("st-stacks", fmtInt(st.stacks));
    setStat("st-lost", fmtInt(st.lost), st.lost > 0);
    setStat("st-late", fmtInt(st.late));
    setStat("st-spans", fmtInt(st.spans));
    setStat("st-inputs", fmtInt(st.inputs_left) + (isNum(st.inputs) ? " of " + fmtInt(st.inputs) : ""));
    $("st-cost").hidden = !isNum(st.lp_ns);
    if (isNum(st.lp_ns)) setStat("st-cost", fmtDur(st.lp_ns));
    $("st-failed").hidden = st.failed !== true;
  }

  // Time since the last snapshot, and whether the event stream is up.
  var lastAt = 0, streamState = "connecting";
  function tickLive() {
    var live = $("live"), age = lastAt ? (Date.now() - lastAt) / 1000 : -1;
    var text = age < 0 ? (streamState === "open" ? "waiting for data" : streamState) : "updated " + (age < 10 ? age.toFixed(1) : Math.round(age)) + " s ago";
    if (streamState !== "open" && lastAt) text += " · " + streamState;
    live.className = streamState === "open" ? (age >= 0 && age < 5 ? "live" : "stale") : "down";
    $("live-age").textContent = text;
  }
  setInterval(tickLive, 500);

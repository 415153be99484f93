  /* ---------- dig.js: the Digging section's commands: what is
   * traced, Trace and Untrace, a command as is (POST /control). ---------- */

  var controlAvailable = false, tracedKey = null;
  function renderControl(s) {
    var c = obj(s.control), traced = arr(c.traced);
    controlAvailable = c.available === true;
    $("dig").hidden = !controlAvailable;
    $("dig-note").hidden = controlAvailable;
    var key = JSON.stringify(traced);
    if (key === tracedKey) return;  // unchanged: keep the buttons under the pointer
    tracedKey = key;
    var ul = $("traced");
    clear(ul);
    traced.forEach(function (n) {
      var name = String(n), li = el("li"), b = el("button", "link untrace", "Untrace");
      b.type = "button";
      b.addEventListener("click", function () { post("/control", { command: "remove " + name }); });
      li.appendChild(el("code", null, name));
      li.appendChild(b);
      ul.appendChild(li);
    });
    if (!traced.length) ul.appendChild(el("li", "empty", "nothing traced from here yet"));
  }

  function fillTrace(name) {
    $("trace-name").value = name;
    if (!controlAvailable) { setStatus("start lp-serve with -p PID to trace from here", "err"); return; }
    $("dig-section").scrollIntoView({ behavior: "smooth", block: "center" });
    $("trace-name").focus();
  }

  $("trace-form").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var name = $("trace-name").value.trim();
    if (!name) { setStatus("enter a function to trace", "err"); return; }
    post("/control", { command: "add " + name });
  });
  $("command-form").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var text = $("command").value;
    if (!text.trim()) { setStatus("enter a command", "err"); return; }
    post("/control", { command: text });
  });

  /* ---------- flamegraph.js: a flame graph on a canvas (Graph): the
   * tree flattened, drawn root at the bottom, zoomed by a path of names,
   * searched, hovered; every one on the page is in graphs. ---------- */

  var MIN_WIDTH = 0.5;      // px: narrower frames (and their subtrees) are not drawn
  var FONT = "12px system-ui, -apple-system, \"Segoe UI\", Roboto, Arial, sans-serif";
  var FONT_SMALL = "10px system-ui, -apple-system, \"Segoe UI\", Roboto, Arial, sans-serif";

  // A node [name, value, children] tree flattened in pre-order into parallel
  // arrays: a subtree is the index range [i, end[i]), so a narrow subtree is
  // skipped in one step. Built anew for each snapshot (5,000 nodes: ~1 ms).
  function flatten(root) {
    var name = [], value = [], start = [], depth = [], parent = [], end = [], maxDepth = 0;
    var stack = Array.isArray(root) ? [[root, -1, 0, 0]] : [];
    while (stack.length) {
      var top = stack.pop(), node = top[0], i = name.length;
      if (node === null) { end[top[1]] = name.length; continue; }
      var v = +node[1];
      name.push(node[0] === null || node[0] === undefined ? "" : String(node[0]));
      value.push(v > 0 ? v : 0);
      start.push(top[2]);
      depth.push(top[3]);
      parent.push(top[1]);
      end.push(0);
      if (top[3] > maxDepth) maxDepth = top[3];
      stack.push([null, i]);  // closes the subtree once its children are done
      var kids = arr(node[2]), x = top[2], placed = [];
      for (var k = 0; k < kids.length; k++) {
        if (!Array.isArray(kids[k])) continue;
        placed.push([kids[k], i, x, top[3] + 1]);
        var kv = +kids[k][1];
        x += kv > 0 ? kv : 0;
      }
      for (k = placed.length - 1; k >= 0; k--) stack.push(placed[k]);
    }
    return { name: name, value: value, start: start, depth: depth, parent: parent, end: end, maxDepth: maxDepth, n: name.length };
  }

  // The frame reached from the root by these names, or 0 (the root).
  function findPath(t, path) {
    var i = 0;
    if (!t.n) return 0;
    for (var p = 0; p < path.length; p++) {
      var found = -1;
      for (var j = i + 1; j < t.end[i]; j = t.end[j]) if (t.name[j] === path[p]) { found = j; break; }
      if (found < 0) return 0;
      i = found;
    }
    return i;
  }

  // A name keeps its colour (page-common.js's paletteColour, from its hash)
  // across graphs and snapshots; the cache is bounded.
  var colourCache = Object.create(null), colourCount = 0;
  function frameColour(nm) {
    var c = colourCache[nm];
    if (c) return c;
    if (colourCount++ > 20000) { colourCache = Object.create(null); colourCount = 0; }
    return (colourCache[nm] = paletteColour(nm, "u"));
  }

  var charWidths = {};
  function charWidth(ctx, font) {
    if (!charWidths[font]) charWidths[font] = ctx.measureText("abcdefghijklmnopqrstuvwxyz_:").width / 28 || 6.5;
    return charWidths[font];
  }

  var graphs = [];  // every Graph on the page, for search, Escape and resize

  // One flame graph on a canvas. Its state (zoom as a path of names, search)
  // survives new data: setData() then render().
  function Graph(title, small, missingText) {
    var self = this;
    this.title = title;
    this.row = small ? 14 : 17;
    this.font = small ? FONT_SMALL : FONT;
    this.missingText = missingText || "no samples in view";
    this.t = flatten(null);
    this.present = false;
    this.total = 0;
    this.zoomed = 0;        // index of the frame filling the width
    this.zoomPath = [];     // names from the root's child down to it
    this.re = null;
    this.matches = null;    // Uint8Array of matched frames, or null
    this.matchShare = 0;
    this.peers = [this];    // graphs shown side by side share one height
    this.rows = [];         // per depth: [index, x, width, ...] of drawn frames
    this.drawn = 0;
    this.onAlt = null;      // Alt-click: function (name)
    this.probe = null;      // the probe's name, for a probe's slow or fast graph

    this.box = el("div", "flame");
    var head = el("header");
    this.h3 = el("h3", null, title);
    this.info = el("div", "info");
    head.appendChild(this.h3);
    head.appendChild(this.info);
    this.crumbs = el("div", "crumbs");
    this.canvas = el("canvas");
    this.note = el("p", "empty");
    this.box.appendChild(head);
    this.box.appendChild(this.crumbs);
    this.box.appendChild(this.canvas);
    this.box.appendChild(this.note);
    this.canvas.addEventListener("mousemove", function (ev) { self.hover(ev); });
    this.canvas.addEventListener("mouseleave", hideTip);
    this.canvas.addEventListener("click", function (ev) {
      var i = self.hit(ev);
      if (i < 0) return;
      if (ev.altKey) { if (i > 0 && self.onAlt) self.onAlt(self.t.name[i]); return; }
      self.zoomTo(i === self.zoomed ? self.t.parent[i] : i);
    });
    graphs.push(this);
  }

  Graph.prototype.setData = function (root) {
    this.present = Array.isArray(root);
    this.t = flatten(this.present ? root : null);
    this.total = this.t.n ? this.t.value[0] : 0;
    this.zoomed = this.zoomPath.length ? findPath(this.t, this.zoomPath) : 0;
    if (!this.zoomed) this.zoomPath = [];  // the zoomed frame is gone: whole view
    this.match();
  };

  Graph.prototype.height = function () {
    var depth = 0;
    for (var i = 0; i < this.peers.length; i++) if (this.peers[i].t.n) depth = Math.max(depth, this.peers[i].t.maxDepth);
    return (depth + 1) * this.row + 2;
  };

  Graph.prototype.render = function () {
    var t = this.t, canvas = this.canvas, ROW = this.row;
    var empty = !(t.n && this.total > 0);
    this.rows = [];
    this.drawn = 0;
    this.note.textContent = this.present ? "no samples" : this.missingText;
    this.note.hidden = !empty;
    canvas.hidden = empty;
    this.showInfo();
    if (empty) return;
    var width = canvas.clientWidth || this.box.clientWidth - 18;
    if (!(width > 0)) width = 800;  // laid out later (a hidden section)
    width = Math.max(200, width);
    var height = this.heightPx = this.height();
    var ratio = window.devicePixelRatio || 1;
    var cw = Math.round(width * ratio), ch = Math.round(height * ratio);
    if (canvas.width !== cw) canvas.width = cw;
    if (canvas.height !== ch) canvas.height = ch;
    canvas.style.height = height + "px";
    var ctx = canvas.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.font = this.font;
    ctx.textBaseline = "middle";
    var charW = charWidth(ctx, this.font);

    var z = this.zoomed, z0 = t.start[z], scale = width / (t.value[z] || 1);
    var rows = this.rows, self = this;
    for (var d = 0; d <= t.maxDepth; d++) rows.push([]);

    function draw(i, x, w) {
      var y = height - (t.depth[i] + 1) * ROW;
      paintFrame(ctx, t.name[i], self.matches && self.matches[i] ? "rgb(230,0,230)" :
        i === 0 ? "rgb(220,220,220)" : frameColour(t.name[i]), x, y, w, ROW, charW);
      rows[t.depth[i]].push(i, x, w);
      self.drawn++;
    }
    // the zoomed frame's ancestors, full width
    for (var p = t.parent[z]; p >= 0; p = t.parent[p]) draw(p, 0, width);
    // the zoomed subtree, skipping what is too narrow to see
    for (var i = z; i < t.end[z];) {
      var w = t.value[i] * scale;
      if (w < MIN_WIDTH) { i = t.end[i]; continue; }
      draw(i, (t.start[i] - z0) * scale, w);
      i++;
    }
  };

  Graph.prototype.showInfo = function () {
    var t = this.t, z = this.zoomed;
    clear(this.info);
    if (this.matches) {
      this.info.appendChild(el("span", "matched", "matched " + fmtPct(this.matchShare)));
      this.info.appendChild(document.createTextNode(" · "));
    }
    this.info.appendChild(document.createTextNode(this.present ? fmtNum(this.total) + " weight" : ""));
    var path = [];
    for (var p = z; p > 0; p = t.parent[p]) path.unshift(t.name[p]);
    this.crumbs.textContent = z ? "zoomed: " + path.join(" › ") + " (" + fmtPct(t.value[z] / this.total) + ")" : "";
  };

  Graph.prototype.hit = function (ev) {
    var r = this.canvas.getBoundingClientRect();
    var x = ev.clientX - r.left, y = ev.clientY - r.top;
    return rowHit(this.rows[Math.floor((this.heightPx - y) / this.row)], x);
  };

  Graph.prototype.hover = function (ev) {
    var i = this.hit(ev);
    if (i < 0) return hideTip();
    var t = this.t, lines = [fmtNum(t.value[i]) + " · " + fmtPct(t.value[i] / this.total) + " of " + this.title];
    var own = selfWeight(t, i);
    if (own > 0 && i > 0) lines.push("self: " + fmtNum(own) + " · " + fmtPct(own / this.total));
    if (this.zoomed && t.depth[i] > t.depth[this.zoomed] && t.value[this.zoomed] > 0)
      lines.push(fmtPct(t.value[i] / t.value[this.zoomed]) + " of the zoomed frame");
    if (i > 0) lines.push("click: zoom · Alt-click: trace");
    showTip(t.name[i], lines, ev);
  };

  Graph.prototype.zoomTo = function (i) {
    var t = this.t;
    this.zoomed = i > 0 ? i : 0;
    this.zoomPath = [];
    for (var p = this.zoomed; p > 0; p = t.parent[p]) this.zoomPath.unshift(t.name[p]);
    this.render();
  };

  // Frames matching this.re; the share counts each matched subtree once (a
  // match inside a matched frame adds nothing), as flamegraph.pl does.
  Graph.prototype.match = function () {
    var t = this.t, re = this.re;
    if (!re) { this.matches = null; this.matchShare = 0; return; }
    var r = matchFrames(t, re, this.total);
    this.matches = r.matches;
    this.matchShare = r.share;
  };

  /* ---------- flamegraph.js: the flame graph both pages draw (Graph),
   * lp-report's and lp-serve's: a tree flattened, drawn on a canvas root
   * at the bottom (a frame's colour from its name, or in a differential
   * graph from how its share changed), zoomed by a path of names that
   * outlives new data (setData() then render()), searched, hovered,
   * clicked; every one on the page is in graphs, redrawn at a new width,
   * zoomed out by Escape. From the page it takes fmtPct (each page's own
   * precision) and from page-common.js the rest. ---------- */

  var MIN_WIDTH = 0.5;      // px: narrower frames (and their subtrees) are not drawn
  var FONT = "12px system-ui, -apple-system, \"Segoe UI\", Roboto, Arial, sans-serif";
  var FONT_SMALL = "10px system-ui, -apple-system, \"Segoe UI\", Roboto, Arial, sans-serif";
  var MATCHED = "rgb(230,0,230)";

  // How a tree's nodes read: lp-serve's (its snapshots' and /range's) are
  // [name, weight, [children]]; a page with others gives its own (kind:
  // "k" kernel, "i" inlined, "" else; a: the other weight of a
  // differential graph).
  var ARRAY_NODES = {
    isNode: Array.isArray,
    name: function (n) { return n[0]; },
    value: function (n) { return n[1]; },
    kids: function (n) { return n[2]; },
    kind: null,
    a: null
  };

  // A tree flattened in pre-order into parallel arrays: a subtree is the
  // index range [i, end[i]), so a narrow subtree is skipped in one step
  // (50,000 frames draw in milliseconds). Weights below 0 count as 0.
  function flatten(root, nodes) {
    var name = [], value = [], start = [], depth = [], parent = [], end = [], kind = [], a = [], maxDepth = 0;
    var stack = nodes.isNode(root) ? [[root, -1, 0, 0]] : [];
    while (stack.length) {
      var top = stack.pop(), node = top[0], i = name.length;
      if (node === null) { end[top[1]] = name.length; continue; }
      var v = +nodes.value(node), nm = nodes.name(node);
      name.push(nm === null || nm === undefined ? "" : String(nm));
      value.push(v > 0 ? v : 0);
      start.push(top[2]);
      depth.push(top[3]);
      parent.push(top[1]);
      kind.push(nodes.kind ? nodes.kind(node) : "");
      if (nodes.a) { var va = +nodes.a(node); a.push(va > 0 ? va : 0); }
      end.push(0);
      if (top[3] > maxDepth) maxDepth = top[3];
      stack.push([null, i]);  // closes the subtree once its children are done
      var kids = nodes.kids(node), x = top[2], placed = [];
      if (!Array.isArray(kids)) kids = [];
      for (var k = 0; k < kids.length; k++) {
        if (!nodes.isNode(kids[k])) continue;
        placed.push([kids[k], i, x, top[3] + 1]);
        var kv = +nodes.value(kids[k]);
        x += kv > 0 ? kv : 0;
      }
      for (k = placed.length - 1; k >= 0; k--) stack.push(placed[k]);
    }
    return { name: name, value: value, start: start, depth: depth, parent: parent, end: end, kind: kind, a: a,
      maxDepth: maxDepth, n: name.length };
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

  // What a frame's children leave of its weight.
  function selfWeight(t, i) {
    var rest = t.value[i];
    for (var j = i + 1; j < t.end[i]; j = t.end[j]) rest -= t.value[j];
    return Math.max(0, rest);
  }

  // The frames of t matching re, and their share of total counting each
  // matched subtree once (a match inside a matched frame adds nothing), as
  // flamegraph.pl does.
  function matchFrames(t, re, total) {
    var m = new Uint8Array(t.n), count = 0, covered = 0;
    for (var i = 1; i < t.n;) {
      if (re.test(t.name[i])) {
        covered += t.value[i];
        for (var j = i; j < t.end[i]; j++) if (re.test(t.name[j])) { m[j] = 1; count++; }
        i = t.end[i];
      } else i++;
    }
    return { matches: m, count: count, share: total > 0 ? covered / total : 0 };
  }

  // FNV-1a of a frame's name: its colour is the same on every page and run.
  function hash(s) {
    var h = 0x811c9dc5;
    for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193); }
    return h >>> 0;
  }

  // A frame's colour by its kind: kernel oranges, inlined aquas, and
  // flamegraph.pl's "hot" palette for the rest; kept across graphs and
  // snapshots (the cache is bounded).
  var colourCache = Object.create(null), colourCount = 0;
  function frameColour(nm, kind) {
    var key = kind + ":" + nm, c = colourCache[key];
    if (c) return c;
    if (colourCount++ > 20000) { colourCache = Object.create(null); colourCount = 0; }
    var h = hash(nm), a = (h & 0xff) / 255, b = (h >>> 8 & 0xff) / 255, d = (h >>> 16 & 0xff) / 255, rgb;
    if (kind === "k") rgb = [225 + 30 * a, 120 + 50 * b, 20 + 30 * d];
    else if (kind === "i") rgb = [60 + 50 * a, 200 + 55 * b, 200 + 55 * d];
    else rgb = [205 + 50 * d, 230 * a, 55 * b];
    return (colourCache[key] = "rgb(" + rgb.map(Math.round).join(",") + ")");
  }

  // Differential: red when the frame takes more of B's weight than of A's,
  // blue when less; saturated at the graph's largest change, near white
  // when unchanged.
  function diffColour(delta, maxDelta) {
    var t = maxDelta > 0 ? Math.min(1, Math.abs(delta) / maxDelta) : 0;
    t = Math.sqrt(t);  // small but real changes stay visible
    var v = Math.round(245 - 200 * t);
    if (Math.abs(delta) < 1e-9) return "rgb(245,245,245)";
    return delta > 0 ? "rgb(250," + v + "," + v + ")" : "rgb(" + v + "," + v + ",250)";
  }

  // One frame: its box, and its name where it fits (cut with ".." where it
  // does not quite).
  function paintFrame(ctx, name, fill, x, y, w, rowH, charW) {
    ctx.fillStyle = fill;
    ctx.fillRect(x, y, Math.max(w - 0.5, 0.5), rowH - 1);
    var fit = Math.floor((w - 6) / charW);
    if (fit >= 3) {
      if (name.length > fit) name = name.slice(0, fit - 2) + "..";
      ctx.fillStyle = "#000";
      ctx.fillText(name, x + 3, y + rowH / 2);
    }
  }

  // The frame a row's hit list (frame, x, width, ...) has at x, or -1.
  function rowHit(row, x) {
    if (!row) return -1;
    for (var k = 0; k < row.length; k += 3)
      if (x >= row[k + 1] && x < row[k + 1] + row[k + 2]) return row[k];
    return -1;
  }

  var charWidths = {};
  function charWidth(ctx, font) {
    if (!charWidths[font]) charWidths[font] = ctx.measureText("abcdefghijklmnopqrstuvwxyz_:").width / 28 || 6.5;
    return charWidths[font];
  }

  function flameEl(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  var graphs = [];  // every Graph on the page, for search, Escape and resize

  // One flame graph in its box (.flame: title and info line, the zoom's
  // path, the canvas, a note when there is nothing to draw), for the page
  // to place, then setData() and render(). opts, each may be left out:
  //   nodes      how its tree's nodes read (ARRAY_NODES)
  //   small      smaller rows and text, for graphs side by side
  //   weight     a weight as text (fmtInt); totalNote follows the total
  //   shareOf    what a frame's share in its tooltip is of (the title)
  //   missingText  the note when there is no tree at all
  //   diff       {nameA, nameB, totalA, totalB}: differential: the width is
  //              B's weight, nodes.a gives A's, the colour their change
  //   onAlt      function (name): Alt-click on a frame; hint: a last line
  //              for a frame's tooltip
  function Graph(title, opts) {
    var self = this;
    opts = opts || {};
    this.title = title;
    this.nodes = opts.nodes || ARRAY_NODES;
    this.row = opts.small ? 14 : 17;
    this.font = opts.small ? FONT_SMALL : FONT;
    this.weight = opts.weight || fmtInt;
    this.totalNote = opts.totalNote || "";
    this.shareOf = opts.shareOf || title;
    this.missingText = opts.missingText || "no samples in view";
    this.diff = opts.diff || null;
    this.onAlt = opts.onAlt || null;
    this.hint = opts.hint || "";
    this.t = flatten(null, this.nodes);
    this.present = false;
    this.total = 0;
    this.zoomed = 0;        // index of the frame filling the width
    this.zoomPath = [];     // names from the root's child down to it
    this.re = null;
    this.matches = null;    // Uint8Array of matched frames, or null
    this.matchShare = 0;
    this.matchCount = 0;
    this.peers = [this];    // graphs shown side by side share one height
    this.rows = [];         // per depth: [index, x, width, ...] of drawn frames
    this.drawn = 0;

    this.box = flameEl("div", "flame");
    var head = this.box.appendChild(flameEl("header"));
    this.h3 = head.appendChild(flameEl("h3", null, title));
    this.info = head.appendChild(flameEl("div", "info"));
    this.crumbs = this.box.appendChild(flameEl("div", "crumbs"));
    this.canvas = this.box.appendChild(flameEl("canvas"));
    this.note = this.box.appendChild(flameEl("p", "empty"));
    this.note.hidden = true;
    this.canvas.addEventListener("mousemove", function (ev) { self.hover(ev); });
    this.canvas.addEventListener("mouseleave", hideTip);
    this.canvas.addEventListener("click", function (ev) {
      var i = self.hit(ev);
      if (i < 0) return;
      if (ev.altKey && self.onAlt) { if (i > 0) self.onAlt(self.t.name[i]); return; }
      self.zoomTo(i === self.zoomed ? self.t.parent[i] : i);
    });
    graphs.push(this);
  }

  // A new tree (none: root not a node), its total weight given or its
  // root's; the zoom (by names) and the search carry over.
  Graph.prototype.setData = function (root, total) {
    var t = this.t = flatten(root, this.nodes);
    this.present = t.n > 0;
    this.total = total > 0 ? total : t.n ? t.value[0] : 0;
    this.zoomed = this.zoomPath.length ? findPath(t, this.zoomPath) : 0;
    if (!this.zoomed) this.zoomPath = [];  // the zoomed frame is gone: whole view
    var d = this.diff;
    if (d) {
      var max = 0;
      this.delta = new Float64Array(t.n);
      for (var i = 0; i < t.n; i++) {
        var c = (d.totalB > 0 ? t.value[i] / d.totalB : 0) - (d.totalA > 0 ? t.a[i] / d.totalA : 0);
        this.delta[i] = c;
        if (i > 0 && Math.abs(c) > max) max = Math.abs(c);
      }
      this.maxDelta = max;
    }
    this.match();
  };

  Graph.prototype.height = function () {
    var depth = 0;
    for (var i = 0; i < this.peers.length; i++) if (this.peers[i].t.n) depth = Math.max(depth, this.peers[i].t.maxDepth);
    return (depth + 1) * this.row + 2;
  };

  Graph.prototype.render = function () {
    var t = this.t, canvas = this.canvas, ROW = this.row, self = this;
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
    var ctx = sizeCanvas(canvas, width, height);
    ctx.font = this.font;
    ctx.textBaseline = "middle";
    var charW = charWidth(ctx, this.font);

    var z = this.zoomed, z0 = t.start[z], scale = width / (t.value[z] || 1);
    var rows = this.rows;
    for (var d = 0; d <= t.maxDepth; d++) rows.push([]);

    function draw(i, x, w) {
      var fill;
      if (self.matches && self.matches[i]) fill = MATCHED;
      else if (self.diff) fill = i === 0 ? "rgb(230,230,230)" : diffColour(self.delta[i], self.maxDelta);
      else fill = i === 0 ? "rgb(220,220,220)" : frameColour(t.name[i], t.kind[i]);
      paintFrame(ctx, t.name[i], fill, x, height - (t.depth[i] + 1) * ROW, w, ROW, charW);
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
    var t = this.t, z = this.zoomed, info = this.info;
    while (info.firstChild) info.removeChild(info.firstChild);
    if (this.matches) info.appendChild(flameEl("span", "matched", "matched " + fmtPct(this.matchShare)));
    info.appendChild(document.createTextNode((this.matches ? " · " : "") +
      (this.present ? this.weight(this.total) + this.totalNote : "")));
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
    var t = this.t, d = this.diff, v = t.value[i], lines;
    var kind = t.kind[i] === "k" ? "kernel · " : t.kind[i] === "i" ? "inlined · " : "";
    if (d) {
      var sa = d.totalA > 0 ? t.a[i] / d.totalA : 0, sb = d.totalB > 0 ? v / d.totalB : 0;
      lines = [kind + d.nameB + ": " + fmtPct(sb) + " (" + this.weight(v) + ")",
        d.nameA + ": " + fmtPct(sa) + " (" + this.weight(t.a[i]) + ")", ["change: ", fmtPts(sb - sa)]];
    } else {
      lines = [[kind + this.weight(v) + " · ", fmtPct(v / this.total), " of " + this.shareOf]];
      var own = selfWeight(t, i);
      if (own > 0) lines.push("self: " + this.weight(own) + " · " + fmtPct(own / this.total));
      if (this.zoomed && t.depth[i] > t.depth[this.zoomed] && t.value[this.zoomed] > 0)
        lines.push(fmtPct(v / t.value[this.zoomed]) + " of the zoomed frame");
    }
    if (i > 0 && this.hint) lines.push(this.hint);
    showTip(t.name[i], lines, ev);
  };

  Graph.prototype.zoomTo = function (i) {
    var t = this.t;
    this.zoomed = i > 0 ? i : 0;
    this.zoomPath = [];
    for (var p = this.zoomed; p > 0; p = t.parent[p]) this.zoomPath.unshift(t.name[p]);
    this.render();
  };

  // The frames matching this.re (none: null).
  Graph.prototype.match = function () {
    var r = this.re ? matchFrames(this.t, this.re, this.total) : { matches: null, share: 0, count: 0 };
    this.matches = r.matches;
    this.matchShare = r.share;
    this.matchCount = r.count;
  };

  // Searched for re (null: no search), redrawn: {matched: frames, share}.
  Graph.prototype.search = function (re) {
    this.re = re || null;
    this.match();
    this.render();
    return { matched: this.matchCount, share: this.matchShare };
  };

  // Escape zooms every graph out; where it is typed, it is the field's.
  document.addEventListener("keydown", function (ev) {
    var tag = ev.target && ev.target.tagName;
    if (ev.key === "Escape" && tag !== "INPUT" && tag !== "SELECT")
      graphs.forEach(function (g) { if (g.zoomed) g.zoomTo(0); });
  });
  onWidth(function () { graphs.forEach(function (g) { g.render(); }); });

/* The entity graph, drawn in SVG: the layout and drawing of `maple-memory graph --html`
   (memory/cli/graph_html.py: a small force simulation from a fixed start, so the same graph
   draws the same way), with panning (drag the background), zooming (wheel, or the buttons) and
   a click on an entity handed to the page. Text goes in with textContent only. */
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var LABEL_CHARS = 28;  // a longer name is cut (its whole name is in the tooltip and the panel)
  var COLOURS = {person: "#e4572e", file: "#17bebb", package: "#76b041", tool: "#2e86ab",
                 project: "#a23b72", thing: "#7d8597", name: "#f0a202"};

  function layout(nodes, edges, byId, center, W, H) {
    nodes.forEach(function (n, i) {
      var a = 2 * Math.PI * i / Math.max(1, nodes.length);
      var r = Math.min(W, H) * 0.34;
      n.x = W / 2 + (n.id === center ? 0 : r * Math.cos(a));
      n.y = H / 2 + (n.id === center ? 0 : r * Math.sin(a));
      n.vx = 0; n.vy = 0;
    });
    var steps = nodes.length > 120 ? 160 : 300;
    for (var step = 0; step < steps; step++) {
      var cool = 1 - step / steps;
      for (var i = 0; i < nodes.length; i++) {
        for (var j = i + 1; j < nodes.length; j++) {
          var a = nodes[i], b = nodes[j], dx = a.x - b.x, dy = a.y - b.y;
          var d2 = Math.max(dx * dx + dy * dy, 25), f = 2200 / d2, d = Math.sqrt(d2);
          a.vx += f * dx / d; a.vy += f * dy / d; b.vx -= f * dx / d; b.vy -= f * dy / d;
        }
      }
      edges.forEach(function (e) {
        var a = byId[e.src], b = byId[e.dst], dx = b.x - a.x, dy = b.y - a.y;
        var d = Math.max(Math.sqrt(dx * dx + dy * dy), 1), f = (d - 110) * 0.02;
        a.vx += f * dx / d; a.vy += f * dy / d; b.vx -= f * dx / d; b.vy -= f * dy / d;
      });
      nodes.forEach(function (n) {
        n.vx += (W / 2 - n.x) * 0.004; n.vy += (H / 2 - n.y) * 0.004;
        n.x += Math.max(-20, Math.min(20, n.vx)) * cool; n.y += Math.max(-20, Math.min(20, n.vy)) * cool;
        n.vx *= 0.5; n.vy *= 0.5;
      });
    }
  }

  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (parent) parent.appendChild(e);
    return e;
  }

  /* Draw `data` ({nodes, edges, center}) into `svg`; options.onSelect(node) on a click. */
  function draw(svg, data, options) {
    options = options || {};
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var W = 900, H = 640;
    var nodes = data.nodes.map(function (n) { return Object.assign({}, n); }), byId = {};
    nodes.forEach(function (n) { byId[n.id] = n; });
    var edges = data.edges.filter(function (e) { return byId[e.src] && byId[e.dst]; });
    layout(nodes, edges, byId, data.center, W, H);
    var view = {x: 0, y: 0, w: W, h: H};
    function setView() { svg.setAttribute("viewBox", [view.x, view.y, view.w, view.h].map(function (v) { return v.toFixed(1); }).join(" ")); }
    setView();
    var edgeLayer = el("g", {"class": "edges"}, svg), nodeLayer = el("g", {"class": "nodes"}, svg);
    var drawn = edges.map(function (e) {
      var line = el("line", {"class": "edge " + e.type, "data-type": e.type}, edgeLayer);
      var label = e.type === "mentioned_with" ? null : el("text", {"class": "edge-label", "text-anchor": "middle"}, edgeLayer);
      if (label) label.textContent = e.type.replace(/_/g, " ");
      return {e: e, line: line, label: label};
    });
    var groups = nodes.map(function (n) {
      var g = el("g", {"class": "node" + (n.id === data.center ? " center" : ""), "data-id": String(n.id),
                       "data-name": n.name, "tabindex": "0", "role": "button"}, nodeLayer);
      var r = 7 + Math.min(14, 3 * Math.sqrt(n.memories || 0));
      el("circle", {r: String(r), fill: COLOURS[n.kind] || COLOURS.thing}, g);
      var t = el("text", {x: String(r + 4), y: "4"}, g);
      t.textContent = n.name.length > LABEL_CHARS ? n.name.slice(0, LABEL_CHARS - 1) + "…" : n.name;
      var tip = el("title", {}, g);
      tip.textContent = n.name + " (" + n.kind + ", " + (n.memories || 0) + " memories)";
      function select() {
        groups.forEach(function (o) { o.g.classList.remove("active"); });
        g.classList.add("active");
        if (options.onSelect) options.onSelect(n);
      }
      g.addEventListener("click", function () { if (!moved) select(); });
      g.addEventListener("keydown", function (ev) { if (ev.key === "Enter") select(); });
      return {g: g, n: n, r: r, text: t, select: select};
    });
    // Labels keep one size on screen whatever the zoom, and a label that would overlap one
    // already placed (or another entity's circle) is hidden: the most connected entities are
    // named first, and zooming in makes room for the rest. Each label tries four sides.
    var order = groups.slice().sort(function (a, b) {
      return (b.n.id === data.center) - (a.n.id === data.center) || (b.n.memories || 0) - (a.n.memories || 0) || (a.n.name < b.n.name ? -1 : 1);
    });
    function textWidth(text, size) {
      var w = 0;
      for (var i = 0; i < text.length; i++) w += text.charCodeAt(i) > 0x2e7f ? 1.0 : 0.62;
      return w * size;
    }
    function overlaps(a, b) { return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1; }
    function labels() {
      var rect = svg.getBoundingClientRect();
      var k = rect.width > 0 ? Math.min(rect.width / view.w, rect.height / view.h) : 1;  // screen px per unit (the viewBox is fitted, "meet")
      var size = 12 / k, pad = 2 / k, taken = [];
      svg.style.setProperty("--label", size.toFixed(2) + "px");
      svg.style.setProperty("--halo", (3 / k).toFixed(2) + "px");
      var circles = groups.map(function (o) { return {x0: o.n.x - o.r, x1: o.n.x + o.r, y0: o.n.y - o.r, y1: o.n.y + o.r, o: o}; });
      // What the frame shows, in units: the viewBox, widened on the side the frame has to spare.
      var sw = rect.width > 0 ? rect.width / k : view.w, sh = rect.height > 0 ? rect.height / k : view.h;
      var shown = {x0: view.x + (view.w - sw) / 2, x1: view.x + (view.w + sw) / 2, y0: view.y + (view.h - sh) / 2, y1: view.y + (view.h + sh) / 2};
      function free(box, own) {
        return box.x0 >= shown.x0 && box.x1 <= shown.x1 && box.y0 >= shown.y0 && box.y1 <= shown.y1 &&
               !taken.some(function (b) { return overlaps(box, b); }) &&
               !circles.some(function (c) { return c.o !== own && overlaps(box, c); });
      }
      order.forEach(function (o) {
        var w = textWidth(o.text.textContent, size), x = o.n.x, y = o.n.y, gap = o.r + 4 / k;
        var sides = [  // [anchor, dx, dy, box]
          ["start", gap, size / 3, {x0: x + gap, x1: x + gap + w, y0: y - size / 2, y1: y + size / 2}],
          ["end", -gap, size / 3, {x0: x - gap - w, x1: x - gap, y0: y - size / 2, y1: y + size / 2}],
          ["middle", 0, gap + size * 0.8, {x0: x - w / 2, x1: x + w / 2, y0: y + gap, y1: y + gap + size}],
          ["middle", 0, -gap - size * 0.25, {x0: x - w / 2, x1: x + w / 2, y0: y - gap - size, y1: y - gap}]
        ];
        var fit = sides.filter(function (sd) {
          var b = sd[3];
          return free({x0: b.x0 - pad, x1: b.x1 + pad, y0: b.y0 - pad, y1: b.y1 + pad}, o);
        })[0];
        var always = o.g.classList.contains("active") || o.n.id === data.center;
        if (!fit && always) fit = sides[0];
        o.text.classList.toggle("hidden", !fit);
        if (!fit) return;
        o.text.setAttribute("text-anchor", fit[0]);
        o.text.setAttribute("x", fit[1].toFixed(1)); o.text.setAttribute("y", fit[2].toFixed(1));
        taken.push(fit[3]);
      });
      drawn.forEach(function (d) {
        if (!d.label) return;
        var a = byId[d.e.src], b = byId[d.e.dst], w = textWidth(d.label.textContent, size * 0.85);
        var mx = (a.x + b.x) / 2, my = (a.y + b.y) / 2 - 3 / k;
        var box = {x0: mx - w / 2, x1: mx + w / 2, y0: my - size * 0.85, y1: my};
        var ok = free(box, null);
        d.label.classList.toggle("hidden", !ok);
        if (ok) taken.push(box);
      });
    }
    function place() {
      groups.forEach(function (o) { o.g.setAttribute("transform", "translate(" + o.n.x.toFixed(1) + "," + o.n.y.toFixed(1) + ")"); });
      drawn.forEach(function (d) {
        var a = byId[d.e.src], b = byId[d.e.dst];
        d.line.setAttribute("x1", a.x.toFixed(1)); d.line.setAttribute("y1", a.y.toFixed(1));
        d.line.setAttribute("x2", b.x.toFixed(1)); d.line.setAttribute("y2", b.y.toFixed(1));
        if (d.label) { d.label.setAttribute("x", ((a.x + b.x) / 2).toFixed(1)); d.label.setAttribute("y", ((a.y + b.y) / 2 - 3).toFixed(1)); }
      });
    }
    var placing = 0;
    function relabel() {  // at most once a frame, however many moves a drag or a wheel sends
      if (!placing) placing = requestAnimationFrame(function () { placing = 0; labels(); });
    }
    place();
    // Fit what was laid out: the simulation does not keep nodes inside the frame.
    if (nodes.length) {
      var xs = nodes.map(function (n) { return n.x; }), ys = nodes.map(function (n) { return n.y; });
      var x0 = Math.min.apply(null, xs) - 60, x1 = Math.max.apply(null, xs) + 120;
      var y0 = Math.min.apply(null, ys) - 40, y1 = Math.max.apply(null, ys) + 40;
      // ...but never closer than the drawing's own scale: a graph of three stays small.
      var w = Math.max(x1 - x0, W * 0.8), hh = Math.max(y1 - y0, H * 0.8);
      view = {x: (x0 + x1 - w) / 2, y: (y0 + y1 - hh) / 2, w: w, h: hh};
      setView();
    }
    function point(ev) {
      var p = svg.createSVGPoint(); p.x = ev.clientX; p.y = ev.clientY;
      return p.matrixTransform(svg.getScreenCTM().inverse());
    }
    // Dragging a node moves it; dragging the background pans; the wheel zooms about the pointer.
    var dragging = null, panning = null, moved = false;
    groups.forEach(function (o) {
      o.g.addEventListener("pointerdown", function (ev) { dragging = o.n; moved = false; ev.stopPropagation(); ev.preventDefault(); });
    });
    svg.addEventListener("pointerdown", function (ev) { panning = {x: ev.clientX, y: ev.clientY, vx: view.x, vy: view.y}; moved = false; });
    svg.addEventListener("pointermove", function (ev) {
      if (dragging) { var p = point(ev); dragging.x = p.x; dragging.y = p.y; moved = true; place(); relabel(); return; }
      if (panning) {
        var rect = svg.getBoundingClientRect(), k = view.w / Math.max(rect.width, 1);
        view.x = panning.vx - (ev.clientX - panning.x) * k; view.y = panning.vy - (ev.clientY - panning.y) * k;
        moved = true; setView();
      }
    });
    window.addEventListener("pointerup", function () { dragging = null; panning = null; setTimeout(function () { moved = false; }, 0); });
    function zoom(factor, cx, cy) {
      view.x = cx - (cx - view.x) * factor; view.y = cy - (cy - view.y) * factor;
      view.w *= factor; view.h *= factor; setView(); relabel();
    }
    svg.addEventListener("wheel", function (ev) {
      ev.preventDefault();
      var p = point(ev);
      zoom(ev.deltaY > 0 ? 1.15 : 1 / 1.15, p.x, p.y);
    }, {passive: false});
    var centre = groups.filter(function (o) { return o.n.id === data.center; })[0];
    if (centre) centre.select();
    labels();
    groups.forEach(function (o) { o.g.addEventListener("click", relabel); });  // the chosen one is always named
    svg.setAttribute("data-rendered", String(nodes.length));
    return {
      zoomIn: function () { zoom(1 / 1.3, view.x + view.w / 2, view.y + view.h / 2); },
      zoomOut: function () { zoom(1.3, view.x + view.w / 2, view.y + view.h / 2); },
      nodes: nodes
    };
  }

  window.MapleGraph = {draw: draw, colours: COLOURS};
})();

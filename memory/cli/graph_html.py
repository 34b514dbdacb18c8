"""A self-contained HTML page drawing part of the knowledge graph (`maple-memory graph --html`).

One file, no network: the data is inlined as JSON, the layout (a small force simulation with a
fixed seed, so the same graph draws the same way) and the drawing (SVG) are inline JavaScript,
and a Content-Security-Policy forbids loading anything else. Hovering over an entity shows its
memories in the side panel (and as the node's SVG tooltip); nodes can be dragged.

Memory text is user data: it reaches the page only as JSON (with `<`, `>` and `&` escaped, so
it cannot close the script element) and is written into the page with `textContent`, never
parsed as HTML.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy"
      content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<style>
  body { margin: 0; font: 14px/1.4 system-ui, sans-serif; color: #1d2433; background: #f7f7f4; display: flex; height: 100vh; }
  #canvas { flex: 1; min-width: 0; }
  svg { width: 100%; height: 100%; display: block; cursor: default; }
  .edge { stroke: #9aa3b5; stroke-width: 1.4; }
  .edge.same_entity { stroke-dasharray: 4 3; }
  .edge.mentioned_with { stroke: #d5d9e2; }
  .edge-label { font-size: 10px; fill: #6b7488; pointer-events: none; }
  .node circle { stroke: #fff; stroke-width: 2; cursor: grab; }
  .node.center circle { stroke: #1d2433; stroke-width: 3; }
  .node text { font-size: 12px; pointer-events: none; paint-order: stroke; stroke: #f7f7f4; stroke-width: 3px; }
  .node.active circle { stroke: #e4572e; stroke-width: 3; }
  aside { width: 340px; overflow: auto; padding: 14px 16px; background: #fff; border-left: 1px solid #e2e4ea; }
  aside h1 { font-size: 16px; margin: 0 0 4px; }
  aside .meta { color: #6b7488; font-size: 12px; margin-bottom: 10px; }
  aside li { margin: 0 0 8px; }
  aside li.failed { color: #b42318; }
  .hint { color: #6b7488; font-size: 12px; }
</style>
</head>
<body>
<div id="canvas"><svg id="graph" role="img" aria-label="__TITLE__"></svg></div>
<aside id="panel">
  <h1 id="panel-title">__TITLE__</h1>
  <div class="meta" id="panel-meta">__SUMMARY__</div>
  <ul id="panel-memories"></ul>
  <p class="hint">Hover over an entity to see its memories; drag to move it.</p>
</aside>
<script type="application/json" id="graph-data">__DATA__</script>
<script>
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("graph-data").textContent);
  var NS = "http://www.w3.org/2000/svg";
  var W = 900, H = 640;
  var svg = document.getElementById("graph");
  svg.setAttribute("viewBox", "0 0 " + W + " " + H);
  var colours = {person: "#e4572e", file: "#17bebb", package: "#76b041", tool: "#2e86ab",
                 project: "#a23b72", thing: "#7d8597", name: "#f0a202"};
  var nodes = data.nodes, byId = {};
  // Deterministic start: nodes on a circle in id order (same graph, same drawing).
  nodes.forEach(function (n, i) {
    var a = 2 * Math.PI * i / Math.max(1, nodes.length);
    n.x = W / 2 + (n.id === data.center ? 0 : 220 * Math.cos(a));
    n.y = H / 2 + (n.id === data.center ? 0 : 220 * Math.sin(a));
    n.vx = 0; n.vy = 0; byId[n.id] = n;
  });
  var edges = data.edges.filter(function (e) { return byId[e.src] && byId[e.dst]; });
  // A small force simulation: pairwise repulsion, springs along edges, a pull to the centre.
  for (var step = 0; step < 300; step++) {
    var cool = 1 - step / 300;
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
      n.x = Math.max(30, Math.min(W - 30, n.x)); n.y = Math.max(30, Math.min(H - 30, n.y));
    });
  }
  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    parent.appendChild(e);
    return e;
  }
  var edgeLayer = el("g", {"class": "edges"}, svg), nodeLayer = el("g", {"class": "nodes"}, svg);
  var drawn = edges.map(function (e) {
    var line = el("line", {"class": "edge " + e.type, "data-type": e.type}, edgeLayer);
    var label = e.type === "mentioned_with" ? null : el("text", {"class": "edge-label"}, edgeLayer);
    if (label) label.textContent = e.type.replace(/_/g, " ");
    return {e: e, line: line, label: label};
  });
  var list = document.getElementById("panel-memories");
  function show(n) {
    document.getElementById("panel-title").textContent = n.name;
    document.getElementById("panel-meta").textContent =
      n.kind + " \\u00b7 " + (n.scope === "global" ? "global" : "this project") + " \\u00b7 " +
      n.memories + " memor" + (n.memories === 1 ? "y" : "ies");
    list.textContent = "";
    (n.memories_shown || []).forEach(function (m) {
      var li = document.createElement("li");
      li.textContent = "#" + m.id + " " + (m.outcome === "failed" ? "[failed decision] " : "") + m.content;
      if (m.outcome === "failed") li.className = "failed";
      list.appendChild(li);
    });
  }
  var groups = nodes.map(function (n) {
    var g = el("g", {"class": "node" + (n.id === data.center ? " center" : ""), "data-id": String(n.id),
                     "data-name": n.name}, nodeLayer);
    var r = 7 + Math.min(14, 3 * Math.sqrt(n.memories || 0));
    el("circle", {r: String(r), fill: colours[n.kind] || colours.thing}, g);
    var t = el("text", {x: String(r + 4), y: "4"}, g);
    t.textContent = n.name;
    var tip = el("title", {}, g);
    tip.textContent = n.name + " (" + n.kind + ")\\n" + (n.memories_shown || []).map(function (m) {
      return "#" + m.id + " " + m.content;
    }).join("\\n");
    g.addEventListener("mouseenter", function () {
      groups.forEach(function (o) { o.g.classList.remove("active"); });
      g.classList.add("active"); show(n);
    });
    return {g: g, n: n};
  });
  function place() {
    groups.forEach(function (o) { o.g.setAttribute("transform", "translate(" + o.n.x.toFixed(1) + "," + o.n.y.toFixed(1) + ")"); });
    drawn.forEach(function (d) {
      var a = byId[d.e.src], b = byId[d.e.dst];
      d.line.setAttribute("x1", a.x.toFixed(1)); d.line.setAttribute("y1", a.y.toFixed(1));
      d.line.setAttribute("x2", b.x.toFixed(1)); d.line.setAttribute("y2", b.y.toFixed(1));
      if (d.label) { d.label.setAttribute("x", ((a.x + b.x) / 2).toFixed(1)); d.label.setAttribute("y", ((a.y + b.y) / 2 - 3).toFixed(1)); }
    });
  }
  place();
  // Dragging: move a node with the pointer, in SVG coordinates.
  var dragging = null;
  function point(ev) {
    var p = svg.createSVGPoint(); p.x = ev.clientX; p.y = ev.clientY;
    return p.matrixTransform(svg.getScreenCTM().inverse());
  }
  groups.forEach(function (o) {
    o.g.addEventListener("pointerdown", function (ev) { dragging = o.n; ev.preventDefault(); });
  });
  svg.addEventListener("pointermove", function (ev) {
    if (!dragging) return;
    var p = point(ev); dragging.x = p.x; dragging.y = p.y; place();
  });
  window.addEventListener("pointerup", function () { dragging = null; });
  var centre = byId[data.center];
  if (centre) show(centre);
  document.body.setAttribute("data-rendered", String(nodes.length));
})();
</script>
</body>
</html>
"""


def _json_for_script(obj: Any) -> str:
    """JSON that cannot end the <script> element it sits in, whatever the memories say."""
    return (
        json.dumps(obj, ensure_ascii=False)
        .replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def render(sub: dict[str, Any], title: str) -> str:
    """The page for a `graph_query.subgraph` result."""
    n_nodes, n_edges = len(sub["nodes"]), len(sub["edges"])
    summary = f"{n_nodes} entities, {n_edges} connections" + (" (cut to the nearest)" if sub.get("truncated") else "")
    data = {"center": sub.get("center"), "nodes": sub["nodes"], "edges": sub["edges"]}
    values = {"TITLE": html.escape(title), "SUMMARY": html.escape(summary), "DATA": _json_for_script(data)}
    # One pass: a memory that happens to contain "__TITLE__" stays as it is.
    return re.sub(r"__(TITLE|SUMMARY|DATA)__", lambda m: values[m.group(1)], _PAGE)

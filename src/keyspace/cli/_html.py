"""The page of ``keyspace inspect --html FILE``: one self-contained HTML file
(no network, no CDN) with a zoomable treemap of the scopes by bytes or keys,
a tooltip with path, keys and bytes on hover, a click that zooms into a scope,
and a table of the shown scope's children beside it."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from ._format import render_component, render_path
from ._tree import ScopeNode, ScopeTree

__all__ = ["page"]

_MAX_CHILDREN = 5000
"""Children kept per scope (the largest by subtree bytes); the rest are summed
into one ``(N more)`` entry, so a page stays small enough to open."""


def _node(node: ScopeNode, typed: bool) -> dict[str, Any]:
    kids = list(node.children.values())
    more: dict[str, Any] | None = None
    if len(kids) > _MAX_CHILDREN:
        kids.sort(key=lambda k: k.sub_bytes, reverse=True)
        rest = kids[_MAX_CHILDREN:]
        kids = kids[:_MAX_CHILDREN]
        more = {
            "n": f"({len(rest):,} more)",
            "p": render_path(node.path, typed=typed) + f" / ({len(rest):,} more)",
            "k": 0,
            "b": 0,
            "K": sum(k.sub_keys for k in rest),
            "B": sum(k.sub_bytes for k in rest),
            "c": [],
        }
    made: dict[str, Any] = {
        "n": "(root)" if not node.path else render_component(node.path[-1], typed=typed),
        "p": render_path(node.path, typed=typed),
        "k": node.keys,
        "b": node.bytes,
        "K": node.sub_keys,
        "B": node.sub_bytes,
        "c": [_node(kid, typed) for kid in kids],
    }
    if more is not None:
        made["c"].append(more)
    return made


def page(tree: ScopeTree, title: str, *, typed: bool, source: str) -> str:
    """The HTML page of ``tree`` (``source``: how the counts were had, shown on it)."""
    data = json.dumps(
        {"title": title, "source": source, "root": _node(tree.root, typed)}, separators=(",", ":")
    )
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return _TEMPLATE.replace("__DATA__", data).replace("__TITLE__", escape(title))


_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>keyspace: __TITLE__</title>
<style>
body{font:13px/1.4 system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
header{padding:8px 12px;border-bottom:1px solid #ddd;background:#fff;display:flex;gap:12px;align-items:center;
flex-wrap:wrap}
header h1{font-size:15px;margin:0}
#crumbs span{cursor:pointer;color:#05a}#crumbs span:hover{text-decoration:underline}
#main{display:flex;gap:12px;padding:12px;height:calc(100vh - 70px);box-sizing:border-box}
#map{position:relative;flex:3;min-width:300px;background:#fff;border:1px solid #ccc;overflow:hidden}
#side{flex:2;overflow:auto;background:#fff;border:1px solid #ccc}
.cell{position:absolute;box-sizing:border-box;border:1px solid #fff;overflow:hidden;padding:2px 4px;
color:#111;font-size:12px;white-space:nowrap;text-overflow:ellipsis}
.cell.zoom{cursor:zoom-in}.cell.own{background-image:repeating-linear-gradient(45deg,transparent 0 6px,
rgba(255,255,255,.35) 6px 12px)}
.cell:hover{outline:2px solid #000;z-index:2}
#tip{position:fixed;pointer-events:none;background:#222;color:#fff;padding:6px 8px;border-radius:4px;
font-size:12px;display:none;z-index:9;max-width:480px;white-space:pre-wrap}
table{border-collapse:collapse;width:100%}th,td{padding:3px 6px;text-align:right;border-bottom:1px solid #eee}
th:first-child,td:first-child{text-align:left}tr.zoom{cursor:zoom-in}tr.zoom:hover{background:#eef}
button.on{font-weight:bold;background:#dde}
#empty{position:absolute;inset:0;display:flex;align-items:center;justify-content:center;color:#888}
</style></head><body>
<header><h1>__TITLE__</h1><span id="source"></span>
<span>size by <button id="by-bytes" class="on">bytes</button><button id="by-keys">keys</button></span>
<span id="crumbs"></span></header>
<div id="main"><div id="map"></div><div id="side"><table><thead><tr><th>scope</th><th>keys</th><th>bytes</th>
<th>subtree keys</th><th>subtree bytes</th></tr></thead><tbody id="rows"></tbody></table></div></div>
<div id="tip"></div>
<script id="data" type="application/json">__DATA__</script>
<script>
"use strict";
const DATA = JSON.parse(document.getElementById("data").textContent);
const root = DATA.root;
let by = "B", current = root, trail = [root];
document.getElementById("source").textContent = DATA.source;
function human(n) {
  if (n < 1000) return n + " B";
  const units = ["kB", "MB", "GB", "TB"]; let v = n;
  for (const u of units) { v /= 1000; if (v < 1000 || u === "TB") return v.toFixed(1) + " " + u; }
}
function num(n) { return n.toLocaleString("en-US"); }
function items(node) {
  const own = by === "B" ? node.b : node.k;
  const out = node.c.map(c => ({node: c, value: by === "B" ? c.B : c.K, own: false}))
    .filter(i => i.value > 0);
  if (own > 0 && node.c.length) out.push({node: node, value: own, own: true});
  if (!node.c.length && own > 0) out.push({node: node, value: own, own: true});
  return out.sort((a, b) => b.value - a.value);
}
function worst(row, w, total, area) {
  const s = row.reduce((a, r) => a + r.value, 0) * area / total;
  let m = 0;
  for (const r of row) {
    const a = r.value * area / total;
    m = Math.max(m, (w * w * a) / (s * s), (s * s) / (w * w * a));
  }
  return m;
}
function squarify(list, x, y, w, h) {
  const out = []; let rest = list.slice(); let total = rest.reduce((a, r) => a + r.value, 0);
  while (rest.length) {
    const side = Math.min(w, h), area = w * h; let row = [rest[0]], i = 1;
    while (i < rest.length &&
           worst(row.concat([rest[i]]), side, total, area) <= worst(row, side, total, area)) {
      row.push(rest[i]); i++;
    }
    const rowSum = row.reduce((a, r) => a + r.value, 0), frac = rowSum / total;
    if (w >= h) {
      const rw = w * frac; let yy = y;
      for (const r of row) { const rh = h * r.value / rowSum; out.push([r, x, yy, rw, rh]); yy += rh; }
      x += rw; w -= rw;
    } else {
      const rh = h * frac; let xx = x;
      for (const r of row) { const rw = w * r.value / rowSum; out.push([r, xx, y, rw, rh]); xx += rw; }
      y += rh; h -= rh;
    }
    rest = rest.slice(i); total -= rowSum;
  }
  return out;
}
const tip = document.getElementById("tip");
function tipText(node, own) {
  return (own ? node.p + "  (own keys)" : node.p) + "\\nkeys " + num(node.k) + "  bytes " + human(node.b) +
    "\\nsubtree keys " + num(node.K) + "  subtree bytes " + human(node.B);
}
function hover(el, node, own) {
  el.addEventListener("mousemove", e => {
    tip.textContent = tipText(node, own); tip.style.display = "block";
    tip.style.left = (e.clientX + 14) + "px"; tip.style.top = (e.clientY + 14) + "px";
  });
  el.addEventListener("mouseleave", () => { tip.style.display = "none"; });
}
function zoom(node) {
  if (node === current) return;
  const at = trail.indexOf(node);
  if (at >= 0) trail = trail.slice(0, at + 1);
  else trail.push(node);
  current = node; tip.style.display = "none"; draw();
}
function draw() {
  const map = document.getElementById("map"); map.textContent = "";
  map.dataset.path = current.p;
  const w = map.clientWidth, h = map.clientHeight, list = items(current);
  if (!list.length) {
    const e = document.createElement("div"); e.id = "empty";
    e.textContent = current.p + ": no keys"; map.appendChild(e);
  }
  squarify(list, 0, 0, w, h).forEach(([it, x, y, cw, ch], i) => {
    const el = document.createElement("div"); const node = it.node;
    el.className = "cell" + (it.own ? " own" : "") + (!it.own && node.c.length ? " zoom" : "");
    el.style.left = x + "px"; el.style.top = y + "px";
    el.style.width = cw + "px"; el.style.height = ch + "px";
    const hue = (i * 47) % 360; el.style.background = "hsl(" + hue + ",60%," + (it.own ? 80 : 72) + "%)";
    el.textContent = (it.own ? "(own keys)" : node.n) + " " + (by === "B" ? human(it.value) : num(it.value));
    el.dataset.path = node.p; el.dataset.own = it.own ? "1" : "0";
    hover(el, node, it.own);
    if (!it.own && node.c.length) el.addEventListener("click", () => zoom(node));
    map.appendChild(el);
  });
  const crumbs = document.getElementById("crumbs"); crumbs.textContent = "";
  trail.forEach((n, i) => {
    if (i) crumbs.appendChild(document.createTextNode(" / "));
    const s = document.createElement("span"); s.textContent = i ? n.n : "(root)";
    s.addEventListener("click", () => zoom(n)); crumbs.appendChild(s);
  });
  const rows = document.getElementById("rows"); rows.textContent = "";
  const shown = [current].concat(current.c.slice().sort((a, b) => (by === "B" ? b.B - a.B : b.K - a.K)));
  shown.forEach((n, i) => {
    const tr = document.createElement("tr");
    const cells = [i ? n.n : n.p + " (shown)", num(n.k), human(n.b), num(n.K), human(n.B)];
    for (const c of cells) {
      const td = document.createElement("td"); td.textContent = c; tr.appendChild(td);
    }
    if (i && n.c.length) { tr.className = "zoom"; tr.addEventListener("click", () => zoom(n)); }
    rows.appendChild(tr);
  });
}
function mode(which) {
  by = which;
  document.getElementById("by-bytes").classList.toggle("on", by === "B");
  document.getElementById("by-keys").classList.toggle("on", by === "K");
  draw();
}
document.getElementById("by-bytes").addEventListener("click", () => mode("B"));
document.getElementById("by-keys").addEventListener("click", () => mode("K"));
window.addEventListener("resize", draw);
draw();
</script></body></html>
"""

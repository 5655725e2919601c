package html

// exploreJS is the compare dashboard's one script: it reads the embedded data
// (rg-data: the runs kept in the history, each strategy's measures) and, on a
// choice in "Select run" or "Select metric", draws the bar chart and the two
// tables of that run and measure with the measure's scale, and the chart over
// the runs of that measure, and shows that run's page with its best and worst
// queries of the strategy chosen in "Select strategy" by that measure. It builds elements with DOM calls and sets text with textContent (a
// name is never markup), makes no request, prints no number of its own (every
// value, interval, n and tick label is a string of the data, printed by
// internal/format: exploreData) and does no arithmetic beyond laying out the
// chart. Without it the page shows this run and the primary measure.
const exploreJS = `(() => {
"use strict";
const $ = (id) => document.getElementById(id);
const D = JSON.parse($("rg-data").textContent);
const SVG = $("rg-bars").querySelector("svg").namespaceURI; // the page's own, so the script names no URL
const el = (ns, tag, attrs, ...kids) => {
  const e = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  for (const k of kids) e.append(k);
  return e;
};
// A point: [mean, lo, hi, n] to place its marks, [4..6] the mean, the
// interval and n as the page prints them, [7] true when its interval is
// marked unreliable: the mark after the interval (flagged), an abbreviation
// titled with its footnote in a table (mark).
const num = (p) => p[4], ci = (p) => p[5], count = (p) => p[6];
const flagged = (p) => ci(p) + (p[7] ? "\u2020" : "");
const mark = (p) => (p[7] ? [el(null, "abbr", {class: "flag", title: D.flag}, "\u2020")] : []);
const runSel = $("rg-run"), metSel = $("rg-metric");
const measure = (key) => D.measures.find((m) => m.key === key);
// A measure as run shows it: its label and scale at the run's k.
const atRun = (run, m) => {
  const i = D.measures.indexOf(m);
  return i < 0 ? m : {...m, label: run.labels[i], scale: run.scales[i]};
};
const val = (s, key) => (s && s.m[key] ? s.m[key][0] : null);
// The strategies of a run in pairs {base, reranked}, ordered by the better
// of each pair on the measure (best first, stable), as the page orders them.
const groups = (run, m) => {
  const at = new Map(run.strategies.map((s) => [s.name, s]));
  const gs = [];
  for (const s of run.strategies) {
    if (s.name.endsWith(D.suffix)) {
      if (!at.has(s.name.slice(0, -D.suffix.length))) gs.push([null, s]);
      continue;
    }
    gs.push([s, at.get(s.name + D.suffix) || null]);
  }
  const better = (a, b) => (m.higher ? a > b : a < b);
  const top = (g) => {
    let t = null;
    for (const s of g) {
      const v = val(s, m.key);
      if (v !== null && (t === null || better(v, t))) t = v;
    }
    return t;
  };
  return gs.map((g, i) => [g, i, top(g)]).sort((a, b) => {
    if (a[2] === b[2]) return a[1] - b[1];
    if (a[2] === null) return 1;
    if (b[2] === null) return -1;
    return better(a[2], b[2]) ? -1 : 1;
  }).map((x) => x[0]);
};
const best = (run, m) => {
  let t = null;
  for (const s of run.strategies) {
    const v = val(s, m.key);
    if (v !== null && (t === null || (m.higher ? v > t : v < t))) t = v;
  }
  return t;
};
const nameOf = (g) => (g[0] || g[1]).name;
const scaled = (m) => (m.scale ? m.label + " (" + m.scale + ")" : m.label);
const table = (box, run, m) => {
  if (!box || !m) return;
  const gs = groups(run, m), pairs = gs.some((g) => g[0] && g[1]), b = best(run, m);
  const head = el(null, "tr", {}, el(null, "th", {scope: "col"}, "strategy"), el(null, "th", {scope: "col", class: "num"}, "base"));
  if (pairs) head.append(el(null, "th", {scope: "col", class: "num"}, D.suffix));
  const body = el(null, "tbody");
  for (const g of gs) {
    const tr = el(null, "tr", {}, el(null, "th", {scope: "row"}, nameOf(g)));
    for (const s of pairs ? g : [g[0]]) {
      const p = s && s.m[m.key];
      if (!p) { tr.append(el(null, "td", {class: "num", "data-value": ""}, D.missing)); continue; }
      const v = p[0] !== null && p[0] === b ? el(null, "strong", {}, num(p)) : num(p);
      tr.append(el(null, "td", {class: "num", "data-strategy": s.name, "data-value": num(p)}, v, el(null, "span", {class: "ci"}, ci(p), ...mark(p), " \u00b7 n = " + count(p))));
    }
    body.append(tr);
  }
  box.replaceChildren(el(null, "div", {class: "table"}, el(null, "table", {}, el(null, "caption", {}, scaled(m)), el(null, "thead", {}, head), body)));
};
const bars = (box, run, m) => {
  const gs = groups(run, m), pairs = gs.some((g) => g[0] && g[1]), slots = pairs ? 2 : 1;
  const A = D.axes[run.bars[m.key]], top = A.hi; // the axis, from zero (barAxis)
  const barH = 18, gap = 3, ggap = 12, axisH = 34, room = 52, cw = 7.7;
  const groupH = slots * barH + (slots - 1) * gap, H = 8 + gs.length * (groupH + ggap) + axisH, bottom = H - axisH;
  const r1 = (v) => Math.round(v * 10) / 10;
  const title = scaled(m) + " per strategy (95% CI whiskers), " + run.label;
  const shown = (g) => (pairs ? g : [g[0] || g[1]]);
  // The chart in a layout, as the page draws it (layout): the wide one with
  // the marks' data-mark, every one but the narrow with their hover text.
  const draw = (W, labelMax, cls) => {
    const tips = cls !== "narrow", marks = cls === "wide";
    const labelW = Math.min(Math.max(0, ...gs.map((g) => nameOf(g).length * cw)), labelMax) + 8;
    const x = (v) => labelW + (v / top) * (W - room - labelW);
    const svg = el(SVG, "svg", {class: cls, viewBox: "0 0 " + W + " " + r1(H), role: "img", "aria-label": title, focusable: "false"});
    // A line at every tick, a label at as many as fit (labelEvery).
    const widest = Math.max(0, ...A.ticks.map((l) => l.length * cw)), step = A.ticks.length > 1 ? x(A.lo + A.step) - x(A.lo) : 0;
    let every = 1;
    while (step > 0 && every * step < widest + 6 && every < 32) every++;
    A.ticks.forEach((label, i) => {
      const tx = r1(x(A.lo + i * A.step));
      svg.append(el(SVG, "line", {class: "gl", x1: tx, x2: tx, y1: 4, y2: r1(bottom)}));
      if (i % every === 0) svg.append(el(SVG, "text", {class: "tick", x: tx, y: r1(bottom + 15), "text-anchor": "middle"}, label));
    });
    svg.append(el(SVG, "line", {class: "axis", x1: r1(labelW), x2: r1(labelW), y1: 4, y2: r1(bottom)}),
      el(SVG, "text", {class: "axis-label", x: r1((labelW + W - room) / 2), y: r1(H - 3), "text-anchor": "middle"}, scaled(m)));
    gs.forEach((g, gi) => {
      const y0 = 8 + gi * (groupH + ggap), name = nameOf(g);
      const maxRunes = Math.round((labelW - 8) / cw);
      const cut = [...name].length <= maxRunes ? name : [...name].slice(0, Math.max(maxRunes - 1, 1)).join("") + "\u2026";
      svg.append(el(SVG, "text", {class: "cat", x: r1(labelW - 6), y: r1(y0 + groupH / 2 + 4), "text-anchor": "end"}, el(SVG, "title", {}, name), cut));
      shown(g).forEach((s, slot) => {
        if (!s) return;
        const dashed = s.name.endsWith(D.suffix), c = "c" + ((D.colours[s.name] || 0) % 8);
        const p = s.m[m.key];
        if (!p) return;
        const by = y0 + slot * (barH + gap);
        if (p[0] === null) { // undefined: the tables' dash where the bar would start (as the page draws it)
          const dash = el(SVG, "text", {class: "undef", x: r1(labelW + 4), y: r1(by + barH / 2 + 4)}, D.missing);
          svg.append(!tips ? el(SVG, "g", {}, dash) : el(SVG, "g", {}, el(SVG, "title", {}, s.name + ": " + m.label + " undefined, n = " + count(p)), dash));
          return;
        }
        const tip = s.name + ": " + m.label + " " + num(p) + (p[1] !== null ? " (95% CI " + flagged(p) + ")" : "") + ", n = " + count(p);
        const rect = {class: "bar " + c + (dashed ? " hatch" : ""), x: r1(labelW), y: r1(by), width: r1(Math.max(x(p[0]) - labelW, 0)), height: barH};
        const gEl = !tips ? el(SVG, "g", {}, el(SVG, "rect", rect))
          : el(SVG, "g", {}, el(SVG, "title", {}, tip), el(SVG, "rect", marks ? {"data-mark": "bar", "data-strategy": s.name, "data-value": num(p), ...rect} : rect));
        let end = x(p[0]);
        if (p[1] !== null && p[2] !== null) {
          const l = r1(x(p[1])), r = r1(x(p[2])), my = r1(by + barH / 2);
          gEl.append(el(SVG, "path", {class: "whisker", d: "M" + l + " " + my + "H" + r + "M" + l + " " + r1(by + 3) + "V" + r1(by + barH - 3) + "M" + r + " " + r1(by + 3) + "V" + r1(by + barH - 3)}));
          end = Math.max(end, x(p[2]));
        }
        gEl.append(el(SVG, "text", {class: "value", x: r1(end + 4), y: r1(by + barH / 2 + 4)}, num(p)));
        svg.append(gEl);
      });
    });
    return svg;
  };
  const legend = el(null, "ul", {class: "legend", "aria-hidden": "true"});
  for (const g of gs) for (const s of shown(g)) {
    if (s) legend.append(el(null, "li", {}, el(null, "span", {class: "sw c" + ((D.colours[s.name] || 0) % 8) + (s.name.endsWith(D.suffix) ? " dashed" : "")}), s.name));
  }
  // The values for screen readers, as the page's own bar charts have them.
  const rows = el(null, "tbody");
  for (const g of gs) for (const s of g) {
    const p = s && s.m[m.key];
    if (p) rows.append(el(null, "tr", {}, el(null, "th", {scope: "row"}, s.name), el(null, "td", {}, num(p)), el(null, "td", {}, p[0] !== null && p[1] !== null && p[2] !== null ? flagged(p) : ""), el(null, "td", {}, count(p))));
  }
  const head = el(null, "tr", {}, ...["strategy", m.label, "95% CI", "n"].map((h) => el(null, "th", {scope: "col"}, h)));
  const kids = [el(null, "figcaption", {}, title)];
  if (legend.children.length > 1) kids.push(legend);
  kids.push(draw(560, 180, "wide"), draw(360, 140, "narrow"), draw(840, 240, "wider"), draw(1200, 300, "widest"), el(null, "div", {class: "sr-only"}, el(null, "table", {}, el(null, "caption", {}, title), el(null, "thead", {}, head), rows)));
  box.replaceChildren(el(null, "figure", {class: "chart"}, ...kids));
};
// The chart over the runs of one measure, as the page draws it (runsChart):
// one line per strategy with its band, the points with their values, the
// runs whose inputs changed marked, the chosen run marked.
const over = (box, m, chosen) => {
  const fig = box && box.querySelector("figure");
  if (!fig) return;
  // A series per strategy and k: runs at different k are never one line.
  const ks = new Set(D.runs.map((r) => r.k).filter((k) => k !== "0")), mixedK = ks.size > 1;
  const sid = (r, name) => (mixedK ? name + " \u00b7 k=" + r.k : name);
  const names = [], base = new Map(), kOf = new Map();
  for (const r of D.runs) for (const s of [...r.strategies].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const id = sid(r, s.name);
    if (s.m[m.key] && !names.includes(id)) { names.push(id); base.set(id, s.name); kOf.set(id, r.k); }
  }
  // A strategy at an older run's other cutoff keeps its colour, dotted.
  const newestK = [...D.runs].reverse().map((r) => r.k).find((k) => k !== "0");
  const at = (r, id) => { const s = r.strategies.find((s) => sid(r, s.name) === id); return s ? s.m[m.key] || null : null; };
  const A = D.axes[m.over], alo = A.lo, ahi = A.hi; // the axis over every run (overAxis)
  const left = 54, top = 10, H = 264, bottom = H - 34 - 6, cw = 7.7, n = D.runs.length;
  const widest = Math.max(0, ...D.runs.map((r) => Math.min(r.x.length * cw, 140)));
  const right = Math.max(16, widest / 2 + 4);
  const r1 = (v) => Math.round(v * 10) / 10;
  const y = (v) => bottom - ((v - alo) / (ahi - alo)) * (bottom - top);
  // DCG@k with its maximum: the runs' one, or each point's own when they differ.
  const dcg = m.key === D.dcg, ofs = dcg ? [...new Set(D.runs.map((r) => r.of))] : [], mixed = ofs.length > 1;
  const ml = mixedK ? m.labelk : m.label;
  const label = !dcg ? ml : ml + " (" + (mixed ? D.mixed : ofs[0]) + ")", axis = mixed ? ml : label;
  const title = label + " per run (95% CI bands; dashed vertical lines: inputs changed)";
  const changed = D.runs.map((r, i) => [r, i]).filter(([r]) => r.changed);
  const series = names.map((name) => {
    const c = "c" + ((D.colours[base.get(name)] || 0) % 8), dashed = base.get(name).endsWith(D.suffix);
    const dotted = mixedK && kOf.get(name) !== "0" && kOf.get(name) !== newestK;
    return {name, c, style: (dashed ? " dashed" : "") + (dotted ? " dotted" : ""), ps: D.runs.map((r) => at(r, name))};
  });
  const ok = (ps, i) => ps[i] && ps[i][0] !== null, band = (ps, i) => ok(ps, i) && ps[i][1] !== null && ps[i][2] !== null;
  // The chart in a layout, as the page draws it (layout): the wide one with
  // the marks' data-mark, every one but the narrow with their hover text.
  const draw = (W, cls) => {
    const tips = cls !== "narrow", marks = cls === "wide";
    const x = (i) => (n <= 1 ? (left + W - right) / 2 : left + (i / (n - 1)) * (W - right - left));
    const svg = el(SVG, "svg", {class: cls, viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": title, focusable: "false"});
    const tip = (...kids) => (tips ? [el(SVG, "title", {}, ...kids)] : []);
    const mark = (kind) => (marks ? {"data-mark": kind} : {});
    A.ticks.forEach((label, i) => {
      const t = alo + i * A.step;
      svg.append(el(SVG, "line", {class: "gl", x1: left, x2: r1(W - right), y1: r1(y(t)), y2: r1(y(t))}),
        el(SVG, "text", {class: "tick", x: left - 6, y: r1(y(t) + 4), "text-anchor": "end"}, label));
    });
    // Centred on its point, but for the first and last labels: inside the chart.
    const every = n > 1 ? Math.max(1, Math.ceil((widest + 10) / ((W - right - left) / (n - 1)))) : 1;
    D.runs.forEach((r, i) => {
      const w = Math.min([...r.x].length, Math.round(140 / cw)) * cw;
      if (i % every === 0) svg.append(el(SVG, "text", {class: "tick", x: r1(Math.min(Math.max(x(i), w / 2), W - w / 2)), y: bottom + 20, "text-anchor": "middle"}, r.x));
    });
    svg.append(el(SVG, "line", {class: "axis", x1: left, x2: r1(W - right), y1: bottom, y2: bottom}),
      el(SVG, "text", {class: "axis-label", x: r1((left + W - right) / 2), y: H - 3, "text-anchor": "middle"}, "run"),
      el(SVG, "text", {class: "axis-label", x: 14, y: r1((top + bottom) / 2), "text-anchor": "middle", transform: "rotate(-90 14 " + r1((top + bottom) / 2) + ")"}, axis));
    changed.forEach(([r, i], ci) => {
      const g = el(SVG, "g", {}, ...tip(r.changed), el(SVG, "line", {...mark("marker"), class: "marker", x1: r1(x(i)), x2: r1(x(i)), y1: top, y2: bottom}));
      // A label only where it fits before the next marker and inside the plot.
      const lab = r.changed.length > 29 ? r.changed.slice(0, 28) + "\u2026" : r.changed;
      const end = ci + 1 < changed.length ? x(changed[ci + 1][1]) - 4 : W - right;
      if (x(i) + 3 + [...lab].length * cw <= end) g.append(el(SVG, "text", {class: "marker-label", x: r1(x(i) + 3), y: top + 10}, lab));
      svg.append(g);
    });
    svg.append(el(SVG, "line", {...mark("chosen"), class: "chosen", x1: r1(x(chosen)), x2: r1(x(chosen)), y1: top, y2: bottom}, ...tip("shown above: " + D.runs[chosen].label)));
    for (const {name, c, style, ps} of series) {
      let d = "";
      for (let i = 0; i < n;) {
        if (!band(ps, i)) { i++; continue; }
        let j = i;
        while (j < n && band(ps, j)) j++;
        if (j === i + 1) { // a lone point: its interval as a bar (LineChart)
          const x0 = r1(x(i) - 4), x1 = r1(x(i) + 4);
          d += "M" + x0 + " " + r1(y(ps[i][2])) + "H" + x1 + "V" + r1(y(ps[i][1])) + "H" + x0 + "Z";
          i = j;
          continue;
        }
        for (let k = i; k < j; k++) d += (k === i ? "M" : "L") + r1(x(k)) + " " + r1(y(ps[k][2]));
        for (let k = j - 1; k >= i; k--) d += "L" + r1(x(k)) + " " + r1(y(ps[k][1]));
        d += "Z";
        i = j;
      }
      if (d) svg.append(el(SVG, "path", {...mark("band"), class: "band " + c, d}));
      let l = "";
      for (let i = 0; i < n; i++) if (ok(ps, i)) l += (i === 0 || !ok(ps, i - 1) ? "M" : "L") + r1(x(i)) + " " + r1(y(ps[i][0]));
      svg.append(el(SVG, "path", {...mark("line"), class: "line " + c + style, d: l}, ...tip(name)));
      ps.forEach((p, i) => {
        if (!ok(ps, i)) return;
        const r = D.runs[i];
        const pt = {class: "pt " + c, cx: r1(x(i)), cy: r1(y(p[0])), r: 3};
        if (!tips) { svg.append(el(SVG, "circle", pt)); return; }
        const text = name + " \u00b7 run " + r.x + ": " + num(p) + (dcg ? r.tip : "") + (band(ps, i) ? " (95% CI " + ci(p) + ")" : "") + ", n = " + count(p) + " \u00b7 " + r.commit;
        svg.append(el(SVG, "circle", marks ? {"data-mark": "point", "data-value": num(p), ...pt} : pt, el(SVG, "title", {}, text)));
      });
    }
    return svg;
  };
  const legend = el(null, "ul", {class: "legend", "aria-hidden": "true"});
  const rows = el(null, "tbody");
  for (const {name, c, style, ps} of series) {
    legend.append(el(null, "li", {}, el(null, "span", {class: "sw " + c + " ln" + style}), name));
    // The table, as the page's own (LineChart): every value with its n, an
    // undefined one "—" with its n; a run without the strategy, no row.
    ps.forEach((p, i) => {
      if (!p || (p[0] === null && !(p[3] > 0))) return;
      rows.append(el(null, "tr", {}, el(null, "th", {scope: "row"}, name), el(null, "td", {}, D.runs[i].x), el(null, "td", {}, ok(ps, i) ? num(p) : D.missing), el(null, "td", {}, band(ps, i) ? ci(p) : ""), el(null, "td", {}, count(p))));
    });
  }
  const head = el(null, "tr", {}, ...["series", "run", axis, "95% CI", "n"].map((h) => el(null, "th", {scope: "col"}, h)));
  const kids = [el(null, "figcaption", {}, title)];
  if (names.length > 1) kids.push(legend);
  kids.push(draw(560, "wide"), draw(360, "narrow"), draw(840, "wider"), draw(1200, "widest"), el(null, "div", {class: "sr-only"}, el(null, "table", {}, el(null, "caption", {}, title), el(null, "thead", {}, head), rows)));
  fig.replaceWith(el(null, "figure", {class: "chart"}, ...kids));
};
// A list of the best or worst queries, as the page draws it (queryTable):
// each query's id, its text (the whole in its title where it is shortened),
// the chosen measure's value and the primary's, every string from the data.
const qtable = (q, s, caption, ids, ki) => {
  const keys = ki === q.p ? [ki] : [ki, q.p];
  const head = el(null, "tr", {}, el(null, "th", {scope: "col"}, "query"));
  if (q.text) head.append(el(null, "th", {scope: "col"}, "text"));
  for (const k of keys) head.append(el(null, "th", {scope: "col", class: "num", "data-key": D.measures[k].key}, q.h[k]));
  const body = el(null, "tbody");
  for (const id of ids) {
    const tr = el(null, "tr", {}, el(null, "th", {scope: "row"}, id));
    if (q.text) tr.append(el(null, "td", q.full[id] ? {class: "qtext", title: q.full[id]} : {class: "qtext"}, q.t[id] || ""));
    for (const k of keys) tr.append(el(null, "td", {class: "num", "data-key": D.measures[k].key}, (s.v[id] || [])[k] || D.missing));
    body.append(tr);
  }
  return el(null, "div", {class: "table"}, el(null, "table", {class: "rg-qtable"}, el(null, "caption", {}, caption), el(null, "thead", {}, head), body));
};
// The whole page is the chosen run: its blocks shown, the others hidden; in
// its best and worst queries, the chosen strategy's lists by the chosen
// measure, drawn from the run's data.
const pages = () => {
  const ri = runSel.value, ki = Number(metSel.value), q = D.runs[Number(ri)].q;
  for (const b of document.querySelectorAll(".rg-runpage")) b.hidden = b.dataset.run !== ri;
  for (const f of document.querySelectorAll(".rg-qcontrols")) {
    const sel = f.querySelector("select");
    f.hidden = false;
    for (const box of f.parentNode.querySelectorAll(".rg-queries")) {
      box.hidden = box.dataset.strategy !== sel.value;
      if (box.hidden || f.closest(".rg-runpage").dataset.run !== ri || !q) continue;
      const s = q.s[sel.value], l = s && s.l[D.measures[ki].key];
      if (!l) { box.replaceChildren(el(null, "p", {}, q.none)); continue; }
      const cell = (t) => el(null, "div", {class: "cell"}, t);
      box.replaceChildren(el(null, "div", {class: "grid"},
        cell(qtable(q, s, "Best of " + sel.value + " by " + q.c[ki], l[0], ki)),
        cell(qtable(q, s, "Worst of " + sel.value + " by " + q.c[ki], l[1], ki))));
    }
  }
};
for (const s of document.querySelectorAll(".rg-qstrategy")) s.addEventListener("change", pages);
const draw = () => {
  const run = D.runs[Number(runSel.value)], pm = D.measures[Number(metSel.value)];
  if (!run || !pm) return;
  const m = atRun(run, pm), second = measure(D.second);
  pages();
  $("rg-shown").textContent = "Shown: " + run.label + " \u00b7 " + m.label;
  $("rg-scale").textContent = run.notes[Number(metSel.value)];
  bars($("rg-bars"), run, m);
  table($("rg-table"), run, m);
  table($("rg-table2"), run, second && atRun(run, second));
  over($("rg-over"), pm, Number(runSel.value));
};
runSel.addEventListener("change", draw);
metSel.addEventListener("change", draw);
$("rg-controls").hidden = false;
draw();
})();
`

package html

// css is the whole style sheet: system fonts only, light and dark (by
// prefers-color-scheme), one column below 1100 px, each chart's drawing
// nearest its box's width (layout; without container queries the wide one,
// at most 640 px), and the Okabe–Ito
// colour-blind-safe palette (lightened in dark mode) for the series. No text
// is below 12 px (browsertest.MinText): the smaller type (.8em and .85em of
// the body's 15 px, 14 px on a phone) is max(12px, …), and a chart's marker
// labels are its other text's 14 units.
const css = `
:root{--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--grid:#eaeef2;--panel:#f6f8fa;--accent:#0969da;
--c0:#0072b2;--c1:#e69f00;--c2:#009e73;--c3:#cc79a7;--c4:#56b4e9;--c5:#d55e00;--c6:#8c7a00;--c7:#7f7f7f;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;--grid:#262c36;--panel:#151b23;--accent:#4493f8;
--c0:#4fa3e0;--c1:#f0b43c;--c2:#2fc496;--c3:#e09ac4;--c4:#8fd0f5;--c5:#f07b3a;--c6:#e3d35a;--c7:#b0b0b0}}
*{box-sizing:border-box}
html{background:var(--bg);color:var(--fg);-webkit-text-size-adjust:100%}
body{margin:0;font-family:-apple-system,BlinkMacSystemFont,"Segoe UI","Noto Sans",Helvetica,Arial,sans-serif;font-size:15px;line-height:1.5}
main{max-width:1320px;margin:0 auto;padding:16px}
h1{font-size:1.6em;margin:0 0 4px;line-height:1.25}
h2{font-size:1.2em;margin:28px 0 10px;padding-bottom:4px;border-bottom:1px solid var(--line)}
p{margin:0 0 10px}
.sub,.note{color:var(--muted)}
.note{font-size:.88em}
ul{padding-left:1.4em;margin:0 0 10px}
details{margin:0 0 12px}
summary{cursor:pointer;color:var(--accent);margin:0 0 8px}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:.9em}
.kpis{display:grid;grid-template-columns:repeat(auto-fit,minmax(220px,1fr));gap:12px;margin:16px 0}
.kpi{border:1px solid var(--line);border-radius:8px;padding:12px 16px;background:var(--panel);min-width:0}
.kpi-label{color:var(--muted);font-size:max(12px,.85em)}
.kpi-value{font-size:1.9em;font-weight:600;line-height:1.2;overflow-wrap:break-word}
.kpi-detail{color:var(--muted);font-size:max(12px,.85em);overflow-wrap:anywhere}
.grid{display:grid;grid-template-columns:minmax(0,1fr);gap:16px 28px}
@media (min-width:1100px){.grid{grid-template-columns:minmax(0,1.15fr) minmax(0,1fr)}}
.cell{min-width:0}
.table{max-width:100%;margin:0 0 12px}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;width:auto;min-width:min(100%,760px);max-width:100%}
caption{text-align:left;font-weight:600;padding:0 0 6px}
th,td{padding:5px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top;overflow-wrap:anywhere}
thead th{font-size:max(12px,.85em);color:var(--muted);font-weight:600;border-bottom:2px solid var(--line);overflow-wrap:normal;word-break:normal;hyphens:none}
tbody th{font-weight:500}
.num{text-align:right;white-space:nowrap}
.ci{display:block;font-size:max(12px,.8em);color:var(--muted)}
.chart{margin:0 0 16px;min-width:0;container-type:inline-size}
.chart figcaption{font-weight:600;margin:0 0 4px}
.chart svg{display:block;width:100%;height:auto;overflow:visible}
.chart svg.wide{max-width:640px}
.chart svg.narrow,.chart svg.wider,.chart svg.widest{display:none}
@container (max-width:479.98px){.chart svg.wide{display:none}.chart svg.narrow{display:block}}
@container (min-width:480px){.chart svg.wide{max-width:none}}
@container (min-width:720px){.chart svg.wide{display:none}.chart svg.wider{display:block}}
@container (min-width:1080px){.chart svg.wider{display:none}.chart svg.widest{display:block}}
.chart text{fill:var(--fg);font-size:14px;font-family:inherit}
.chart .tick,.chart .axis-label,.chart .undef{fill:var(--muted)}
.chart .gl{stroke:var(--grid);stroke-width:1}
.chart .axis{stroke:var(--line);stroke-width:1}
.chart .whisker{stroke:var(--fg);stroke-width:1.3;fill:none}
.chart .marker{stroke:var(--muted);stroke-width:1;stroke-dasharray:3 3}
.chart .chosen{stroke:var(--accent);stroke-width:2;opacity:.6}
.chart .marker-label{fill:var(--muted)}
.chart .line{fill:none;stroke-width:2}
.chart .line.dashed{stroke-dasharray:6 4}
.chart .line.dotted{stroke-dasharray:1.5 3.5;stroke-linecap:round}
.chart .line.dashed.dotted{stroke-dasharray:7 3 1.5 3}
.chart .band{stroke:none;opacity:.12}
.legend{list-style:none;padding:0;margin:0 0 6px;display:flex;flex-wrap:wrap;gap:4px 14px;font-size:max(12px,.85em)}
.legend li{display:flex;align-items:center;gap:6px;min-width:0;overflow-wrap:anywhere}
.sw{display:inline-block;width:16px;height:11px;border-radius:2px;flex:none;color:var(--c);background:currentColor}
.sw.dashed{background:color-mix(in srgb,currentColor 28%,transparent);border:2px dashed currentColor}
.sw.ln{width:22px;height:0;border:0;border-top:3px solid currentColor;border-radius:0;background:none}
.sw.ln.dashed{border-top-style:dashed}
.sw.ln.dotted{border-top-style:dotted}
.sw.ln.dashed.dotted{border-top:0;height:3px;background:repeating-linear-gradient(90deg,currentColor 0 6px,transparent 6px 9px,currentColor 9px 12px,transparent 12px 15px)}
.c0{--c:var(--c0)}.c1{--c:var(--c1)}.c2{--c:var(--c2)}.c3{--c:var(--c3)}.c4{--c:var(--c4)}.c5{--c:var(--c5)}.c6{--c:var(--c6)}.c7{--c:var(--c7)}
.bar{fill:var(--c);stroke:var(--c);stroke-width:0}
.bar.hatch{fill-opacity:.28;stroke-width:2;stroke-dasharray:5 3}
.pt{fill:var(--c)}
.line{stroke:var(--c)}
.band{fill:var(--c)}
.line{fill:none!important}
.controls{display:flex;flex-wrap:wrap;gap:8px 20px;margin:0 0 14px;padding:10px 12px;border:1px solid var(--line);border-radius:8px;background:var(--panel)}
.controls[hidden]{display:none}
.controls label{display:flex;flex-wrap:wrap;align-items:center;gap:4px 8px;font-weight:600;min-width:0}
.controls select{font:inherit;font-weight:400;max-width:100%;min-width:0;padding:3px 6px;color:var(--fg);background:var(--bg);border:1px solid var(--line);border-radius:6px}
.shown{font-weight:600;margin:0 0 8px}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
@media (max-width:480px){main{padding:10px}body{font-size:14px}th,td{padding:4px 5px}.num{white-space:normal;overflow-wrap:normal}.kpi-value{font-size:1.5em}}
table.cards th,table.cards td,.rg-qtable th,.rg-qtable td,#rg-table th,#rg-table td,#rg-table2 th,#rg-table2 td{overflow-wrap:break-word}
table.cards tbody th,.rg-qtable tbody th,table.cards .num,.rg-qtable .num,#rg-table .num,#rg-table2 .num,table.cards tbody th .ci{white-space:nowrap}
@media (max-width:480px){.rg-qtable tbody th,.rg-qtable thead th.num{white-space:normal}}
@media (max-width:700px){table.cards,table.cards tbody,table.cards tr,table.cards th,table.cards td,table.cards caption{display:block;width:auto}
table.cards thead{display:none}table.cards tr{border:1px solid var(--line);border-radius:8px;margin:0 0 8px;padding:4px 10px}
table.cards tbody th{white-space:normal;border-bottom:1px solid var(--line);padding:4px 0}
table.cards td{display:flex;justify-content:space-between;align-items:baseline;gap:12px;border-bottom:0;padding:3px 0}
table.cards td::before{content:attr(data-label);color:var(--muted);font-size:max(12px,.85em);text-align:left}
table.cards td .cv{text-align:right;min-width:0}table.cards td.num .cv{white-space:nowrap}}
`

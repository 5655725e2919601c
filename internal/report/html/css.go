package html

// css is the whole style sheet: system fonts only, light and dark (by
// prefers-color-scheme), one column below 1100 px, and the Okabe–Ito
// colour-blind-safe palette (lightened in dark mode) for the series.
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
.kpi-label{color:var(--muted);font-size:.85em}
.kpi-value{font-size:1.9em;font-weight:600;line-height:1.2;overflow-wrap:anywhere}
.kpi-detail{color:var(--muted);font-size:.85em;overflow-wrap:anywhere}
.grid{display:grid;grid-template-columns:minmax(0,1fr);gap:16px 28px}
@media (min-width:1100px){.grid{grid-template-columns:minmax(0,1.15fr) minmax(0,1fr)}}
.cell{min-width:0}
.table{max-width:100%;margin:0 0 12px}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;width:100%;max-width:760px}
caption{text-align:left;font-weight:600;padding:0 0 6px}
th,td{padding:5px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top;overflow-wrap:anywhere}
thead th{font-size:.85em;color:var(--muted);font-weight:600;border-bottom:2px solid var(--line)}
tbody th{font-weight:500}
.num{text-align:right;white-space:nowrap}
.ci{display:block;font-size:.8em;color:var(--muted)}
.chart{margin:0 0 16px;min-width:0}
.chart figcaption{font-weight:600;margin:0 0 4px}
.chart svg{display:block;width:100%;max-width:640px;height:auto;overflow:visible}
.chart text{fill:var(--fg);font-size:14px;font-family:inherit}
.chart .tick,.chart .axis-label{fill:var(--muted)}
.chart .gl{stroke:var(--grid);stroke-width:1}
.chart .axis{stroke:var(--line);stroke-width:1}
.chart .whisker{stroke:var(--fg);stroke-width:1.3;fill:none}
.chart .marker{stroke:var(--muted);stroke-width:1;stroke-dasharray:3 3}
.chart .marker-label{fill:var(--muted);font-size:12px}
.chart .line{fill:none;stroke-width:2}
.chart .line.dashed{stroke-dasharray:6 4}
.chart .band{stroke:none;opacity:.12}
.chart .hatch{fill-opacity:.55}
.legend{list-style:none;padding:0;margin:0 0 6px;display:flex;flex-wrap:wrap;gap:4px 14px;font-size:.85em}
.legend li{display:flex;align-items:center;gap:6px;min-width:0;overflow-wrap:anywhere}
.sw{display:inline-block;width:14px;height:10px;border-radius:2px;flex:none}
.sw.dashed{opacity:.55}
.bar.c0,.pt.c0,.sw.c0{fill:var(--c0);background:var(--c0)}.line.c0,.band.c0{stroke:var(--c0);fill:var(--c0)}
.bar.c1,.pt.c1,.sw.c1{fill:var(--c1);background:var(--c1)}.line.c1,.band.c1{stroke:var(--c1);fill:var(--c1)}
.bar.c2,.pt.c2,.sw.c2{fill:var(--c2);background:var(--c2)}.line.c2,.band.c2{stroke:var(--c2);fill:var(--c2)}
.bar.c3,.pt.c3,.sw.c3{fill:var(--c3);background:var(--c3)}.line.c3,.band.c3{stroke:var(--c3);fill:var(--c3)}
.bar.c4,.pt.c4,.sw.c4{fill:var(--c4);background:var(--c4)}.line.c4,.band.c4{stroke:var(--c4);fill:var(--c4)}
.bar.c5,.pt.c5,.sw.c5{fill:var(--c5);background:var(--c5)}.line.c5,.band.c5{stroke:var(--c5);fill:var(--c5)}
.bar.c6,.pt.c6,.sw.c6{fill:var(--c6);background:var(--c6)}.line.c6,.band.c6{stroke:var(--c6);fill:var(--c6)}
.bar.c7,.pt.c7,.sw.c7{fill:var(--c7);background:var(--c7)}.line.c7,.band.c7{stroke:var(--c7);fill:var(--c7)}
.line{fill:none!important}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
@media (max-width:480px){main{padding:10px}body{font-size:14px}th,td{padding:4px 5px}.num{white-space:normal}.kpi-value{font-size:1.5em}}
`

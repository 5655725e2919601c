package html_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/browsertest"
)

const breaksJS = `(() => {
  const out = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n; (n = walk.nextNode());) {
    const el = n.parentElement;
    if (!el || !el.closest("td,th,.kpi-value,.legend,caption") || el.closest(".sr-only,[hidden],svg")) continue;
    const re = /\S+/g;
    for (let m; (m = re.exec(n.data));) {
      const r = document.createRange();
      r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
      const lines = new Set([...r.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top)));
      if (lines.size > 1) out.push(m[0]);
    }
  }
  return {broken: out.slice(0, 20), n: out.length, sw: document.documentElement.scrollWidth};
})()`

func TestZZProbe(t *testing.T) {
	b := browsertest.Start(t)
	for _, w := range []int{390, 850, 1400} {
		ms := browsertest.Measures(t, b, browsertest.Page{Name: "probe", Path: os.Getenv("PROBE"), Widths: []int{w}, Script: breaksJS})
		m := ms[0]
		fmt.Println(w, m.ScrollWidth, m.ClientWidth, string(m.Result))
		for _, o := range m.Overflows {
			fmt.Println("  ", o)
		}
	}
}

package browsertest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Find returns the Chromium binary: $CHROMIUM, else chromium or
// chromium-browser on PATH.
func Find() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return exec.LookPath(p)
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errNoChromium
}

// Overflow is an element wider than the page, or whose content is cut or scrolls
// sideways inside it.
type Overflow struct {
	Element string `json:"element"` // tag, id and classes, with the nearest heading or <summary> before it
	Kind    string `json:"kind"`    // "beyond-viewport" or "scrolls" (content wider than its box)
	Pixels  int    `json:"px"`      // by how much
}

func (o Overflow) String() string {
	return fmt.Sprintf("%s: %s by %d px", o.Element, o.Kind, o.Pixels)
}

// Measure is what one load of a page at one width showed.
type Measure struct {
	Width         int
	ConsoleErrors []string // console.error/assert, uncaught exceptions, error log entries
	External      []string // requests for anything but file: and data: URLs (all were blocked)
	ScrollWidth   int      // document.documentElement.scrollWidth
	ClientWidth   int      // document.documentElement.clientWidth
	Height        int      // document height, CSS px
	Overflows     []Overflow
	Marks         map[string]int  // CSS selector -> matching elements
	TallRows      []string        // table rows taller than TallRow px (text and height)
	SmallText     []string        // visible text rendered below MinText px (element, size, text)
	Background    string          // computed background colour of the page (light or dark scheme)
	PNG           []byte          // full-page screenshot
	Result        json.RawMessage // what Options.Script returned (JSON), measured after it ran
}

// TallRow is the height (CSS px) above which a table row is reported as tall.
const TallRow = 100

// MinText is the smallest text a page may show, CSS px as rendered: the
// threshold of Lighthouse's "Document uses legible font sizes" audit ("font
// sizes less than 12px are too small to be legible and require mobile
// visitors to pinch to zoom"). Lighthouse passes a page with up to 40% of
// its text below it; a report's every text is held to it, since the small
// text of a report is its figures (a table's intervals were 11.2 px on a
// phone).
const MinText = 12

// Options of one load.
type Options struct {
	Width       int
	Marks       []string // CSS selectors to count
	OpenDetails bool     // open every <details> before measuring (what a reader who expands sees)
	Screenshot  bool
	// FastPNG encodes the screenshot for speed rather than size (the same
	// pixels in a larger PNG): the tests' CI artifacts, where the encoding of a
	// full page costs about a fifth of the screenshot's CPU (about a tenth of a
	// browser test's). The images checked in (scripts/screenshots through
	// browsertest/shoot) keep the compact encoding.
	FastPNG   bool
	Dark      bool // emulate prefers-color-scheme: dark
	MaxHeight int  // cut the screenshot at this height (0: the whole page)
	// Script, when set, is a JavaScript expression evaluated after the load
	// (and OpenDetails), before the page is measured: what a reader does
	// (choose an option, click), returning what the test checks (any JSON
	// value, in Measure.Result). An exception fails the load.
	Script string
	// NoScript loads the page with JavaScript disabled (what a mail client
	// or an artifact viewer shows).
	NoScript bool
}

// measureJS collects the layout facts; elements inside a visually-hidden box
// (1×1 px with overflow hidden: screen-reader text) are skipped.
const measureJS = `(() => {
  const de = document.documentElement, vw = de.clientWidth;
  const hidden = new Set();
  const isHidden = (el) => {
    for (let e = el; e && e !== document.body; e = e.parentElement) {
      if (hidden.has(e)) return true;
      const r = e.getBoundingClientRect(), cs = getComputedStyle(e);
      if (r.width <= 1 && r.height <= 1 && cs.overflow !== 'visible') { hidden.add(e); return true; }
    }
    return false;
  };
  const name = (el) => {
    let s = el.tagName.toLowerCase();
    if (el.id) s += '#' + el.id;
    if (typeof el.className === 'string' && el.className.trim()) s += '.' + el.className.trim().split(/\s+/).join('.');
    const hs = [...document.querySelectorAll('h1,h2,h3,h4,h5,h6,summary')].filter(x => x.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING);
    const h = hs[hs.length - 1];
    if (h) s += ' under "' + h.textContent.trim().slice(0, 60) + '"';
    return s;
  };
  const over = [], scrollers = [];
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (isHidden(el)) continue;
    // An element inside a reported one is part of that report.
    if (scrollers.some(s => s.contains(el))) continue;
    const cs = getComputedStyle(el);
    const beyond = Math.max(r.right - vw, -r.left);
    if (beyond > 0.5) { over.push({element: name(el), kind: 'beyond-viewport', px: Math.ceil(beyond)}); scrollers.push(el); continue; }
    if (cs.overflowX !== 'visible' && el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0) {
      over.push({element: name(el), kind: 'scrolls', px: el.scrollWidth - el.clientWidth});
      scrollers.push(el);
    }
  }
  const tall = [];
  for (const tr of document.querySelectorAll('tr')) {
    if (isHidden(tr)) continue;
    const h = tr.getBoundingClientRect().height;
    if (h > %d) tall.push(Math.round(h) + ' px: ' + tr.textContent.replace(/\s+/g, ' ').trim().slice(0, 80));
  }
  // Every visible text, a text node or the content of a ::before or ::after,
  // rendered below MinText px: its font size times the scale of its SVG, if
  // in one. Reported once per element name and size, with how many more.
  const small = new Map(), minText = %v;
  const tooSmall = (el, px, text) => {
    if (px >= minText - 0.005) return;
    let s = el.tagName.toLowerCase();
    const cls = (el.getAttribute('class') || '').trim();
    if (cls) s += '.' + cls.split(/\s+/).join('.');
    const key = s + ' ' + px.toFixed(1);
    const seen = small.get(key);
    if (seen) { seen.n++; return; }
    small.set(key, {n: 1, say: s + name(el).replace(/^[^ ]*/, '') + ': ' + px.toFixed(1) + ' px "' + text.replace(/\s+/g, ' ').trim().slice(0, 40) + '"'});
  };
  const scaled = (el, cs) => {
    let px = parseFloat(cs.fontSize);
    const svg = el instanceof SVGElement ? (el.ownerSVGElement || el) : null;
    if (svg && svg.getScreenCTM()) px *= svg.getScreenCTM().a;
    return px;
  };
  // isHidden, remembering the shown elements too (a text node per cell).
  const hid = new Map();
  const hiddenAt = (el) => {
    if (!el || el === document.body) return false;
    if (hid.has(el)) return hid.get(el);
    const r = el.getBoundingClientRect();
    const h = (r.width <= 1 && r.height <= 1 && getComputedStyle(el).overflow !== 'visible') || hiddenAt(el.parentElement);
    hid.set(el, h);
    return h;
  };
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const el = n.parentElement;
    if (!el || !n.data.trim()) continue;
    range.selectNodeContents(n);
    if (![...range.getClientRects()].some(r => r.width > 0 && r.height > 0)) continue;
    const cs = getComputedStyle(el);
    if (!el.checkVisibility({visibilityProperty: true}) || hiddenAt(el)) continue;
    tooSmall(el, scaled(el, cs), n.data);
  }
  // The elements a rule of the page's style sheets gives a ::before or
  // ::after (computing every element's pseudo-elements doubled a page's
  // measuring).
  const pseudoOf = [];
  const rulesOf = (rules) => {
    for (const r of rules) {
      if (r.cssRules) rulesOf(r.cssRules);
      if (!r.selectorText) continue;
      for (const sel of r.selectorText.split(',')) {
        if (/::?(before|after)\b/.test(sel)) pseudoOf.push(sel.replace(/::?(before|after)\b/g, '').trim() || '*');
      }
    }
  };
  for (const sheet of document.styleSheets) {
    try { rulesOf(sheet.cssRules); } catch (e) { /* a sheet of another origin: none here */ }
  }
  for (const el of pseudoOf.length ? document.body.querySelectorAll(pseudoOf.join(',')) : []) {
    for (const pseudo of ['::before', '::after']) {
      const ps = getComputedStyle(el, pseudo);
      if (ps.content === 'none' || ps.content === 'normal' || ps.content === '""' || ps.display === 'none' || ps.visibility !== 'visible') continue;
      if (!el.checkVisibility({visibilityProperty: true}) || hiddenAt(el)) continue;
      let text = ps.content;
      const attr = /^attr\(([^)]+)\)$/.exec(text);
      text = attr ? el.getAttribute(attr[1].trim()) || '' : text.replace(/^"|"$/g, '');
      if (!text.trim()) continue;
      tooSmall(el, scaled(el, ps), pseudo + ' ' + text);
    }
  }
  const smallText = [...small.values()].map(v => v.say + (v.n > 1 ? ' and ' + (v.n - 1) + ' more like it' : ''));
  const marks = {};
  for (const sel of %s) marks[sel] = document.querySelectorAll(sel).length;
  return {scrollWidth: de.scrollWidth, clientWidth: vw, height: Math.ceil(de.scrollHeight), overflows: over, marks, tall, small: smallText, bg: getComputedStyle(de).backgroundColor};
})()`

// Load opens the file in a new page at the given width and measures it. Every
// request for anything but a file: or data: URL is recorded and failed, so no
// request leaves the machine.
func (b *Browser) Load(ctx context.Context, path string, opt Options) (*Measure, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, err
	}
	u := (&url.URL{Scheme: "file", Path: abs}).String()
	m := &Measure{Width: opt.Width}
	var mu sync.Mutex
	loaded := make(chan struct{})
	var once sync.Once
	var s *session
	record := func(list *[]string, v string) {
		mu.Lock()
		*list = append(*list, v)
		mu.Unlock()
	}
	external := func(raw string) bool {
		return !strings.HasPrefix(raw, "file:") && !strings.HasPrefix(raw, "data:") && raw != "about:blank"
	}
	s, err = b.tab(ctx, func(e Event) {
		switch e.Method {
		case "Page.loadEventFired":
			once.Do(func() { close(loaded) })
		case "Fetch.requestPaused":
			var p struct {
				RequestID string `json:"requestId"`
				Request   struct {
					URL string `json:"url"`
				} `json:"request"`
			}
			if json.Unmarshal(e.Params, &p) != nil {
				return
			}
			if external(p.Request.URL) {
				record(&m.External, p.Request.URL)
				s.notify("Fetch.failRequest", map[string]any{"requestId": p.RequestID, "errorReason": "BlockedByClient"})
			} else {
				s.notify("Fetch.continueRequest", map[string]any{"requestId": p.RequestID})
			}
		case "Network.requestWillBeSent", "Network.webSocketCreated":
			var p struct {
				URL     string `json:"url"`
				Request struct {
					URL string `json:"url"`
				} `json:"request"`
			}
			if json.Unmarshal(e.Params, &p) != nil {
				return
			}
			if p.URL == "" {
				p.URL = p.Request.URL
			}
			if external(p.URL) && e.Method == "Network.webSocketCreated" {
				record(&m.External, p.URL)
			}
		case "Runtime.consoleAPICalled":
			var p struct {
				Type string `json:"type"`
				Args []struct {
					Value       any    `json:"value"`
					Description string `json:"description"`
				} `json:"args"`
			}
			if json.Unmarshal(e.Params, &p) != nil || (p.Type != "error" && p.Type != "assert") {
				return
			}
			var parts []string
			for _, a := range p.Args {
				if a.Description != "" {
					parts = append(parts, a.Description)
				} else {
					parts = append(parts, fmt.Sprint(a.Value))
				}
			}
			record(&m.ConsoleErrors, "console."+p.Type+": "+strings.Join(parts, " "))
		case "Runtime.exceptionThrown":
			var p struct {
				Details struct {
					Text      string `json:"text"`
					Exception struct {
						Description string `json:"description"`
					} `json:"exception"`
				} `json:"exceptionDetails"`
			}
			if json.Unmarshal(e.Params, &p) == nil {
				record(&m.ConsoleErrors, "exception: "+p.Details.Text+" "+p.Details.Exception.Description)
			}
		case "Log.entryAdded":
			var p struct {
				Entry struct {
					Level  string `json:"level"`
					Source string `json:"source"`
					Text   string `json:"text"`
					URL    string `json:"url"`
				} `json:"entry"`
			}
			if json.Unmarshal(e.Params, &p) == nil && p.Entry.Level == "error" {
				record(&m.ConsoleErrors, p.Entry.Source+": "+p.Entry.Text+" "+p.Entry.URL)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	// A tab is reused only after a load that went to its end (a failed one
	// may leave the page in any state): every setting below is made anew.
	done := false
	defer func() {
		if done {
			b.release(context.WithoutCancel(ctx), s)
		} else {
			_ = s.close(context.WithoutCancel(ctx))
		}
	}()
	for _, c := range []struct {
		method string
		params any
	}{
		{"Emulation.setDeviceMetricsOverride", map[string]any{"width": opt.Width, "height": 900, "deviceScaleFactor": 1, "mobile": false}},
		{"Emulation.setEmulatedMedia", map[string]any{"features": []map[string]string{{"name": "prefers-color-scheme", "value": map[bool]string{true: "dark", false: "light"}[opt.Dark]}}}},
		{"Emulation.setScriptExecutionDisabled", map[string]any{"value": opt.NoScript}},
	} {
		if err := s.call(ctx, c.method, c.params, nil); err != nil {
			return nil, err
		}
	}
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if err := s.call(ctx, "Page.navigate", map[string]any{"url": u}, &nav); err != nil {
		return nil, err
	}
	if nav.ErrorText != "" {
		return nil, fmt.Errorf("navigate to %s: %s", u, nav.ErrorText)
	}
	select {
	case <-loaded:
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: no load event: %w", path, ctx.Err())
	}
	if opt.OpenDetails {
		if err := s.eval(ctx, `document.querySelectorAll('details').forEach(d => d.open = true)`, nil); err != nil {
			return nil, err
		}
	}
	if opt.Script != "" {
		if err := s.eval(ctx, opt.Script, &m.Result); err != nil {
			return nil, fmt.Errorf("script: %w", err)
		}
	}
	sels, _ := json.Marshal(append([]string{}, opt.Marks...))
	var got struct {
		ScrollWidth int            `json:"scrollWidth"`
		ClientWidth int            `json:"clientWidth"`
		Height      int            `json:"height"`
		Overflows   []Overflow     `json:"overflows"`
		Marks       map[string]int `json:"marks"`
		Tall        []string       `json:"tall"`
		Small       []string       `json:"small"`
		Background  string         `json:"bg"`
	}
	if err := s.eval(ctx, fmt.Sprintf(measureJS, TallRow, MinText, sels), &got); err != nil {
		return nil, err
	}
	m.ScrollWidth, m.ClientWidth, m.Height = got.ScrollWidth, got.ClientWidth, got.Height
	m.Overflows, m.Marks, m.TallRows, m.SmallText, m.Background = outermost(got.Overflows), got.Marks, got.Tall, got.Small, got.Background
	if opt.Screenshot {
		h := min(max(got.Height, 1), 16000)
		if opt.MaxHeight > 0 {
			h = min(h, opt.MaxHeight)
		}
		png, err := s.screenshot(ctx, opt.Width, h, opt.FastPNG)
		if err != nil {
			return nil, err
		}
		m.PNG = png
	}
	// Late events (a blocked image's error entry) arrive shortly after load.
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	m.ConsoleErrors = append([]string(nil), m.ConsoleErrors...)
	m.External = append([]string(nil), m.External...)
	done = true
	return m, nil
}

// screenshot draws the tab at width × height px, brought to the front first
// and kept there (no tab opens or closes meanwhile: Browser.front).
func (s *session) screenshot(ctx context.Context, width, height int, fast bool) ([]byte, error) {
	if err := s.b.lockFront(ctx); err != nil {
		return nil, err
	}
	defer s.b.unlockFront()
	if err := s.call(ctx, "Page.bringToFront", nil, nil); err != nil {
		return nil, err
	}
	if err := s.call(ctx, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
		return nil, err
	}
	var shot struct {
		Data string `json:"data"`
	}
	if err := s.call(ctx, "Page.captureScreenshot", map[string]any{"format": "png", "optimizeForSpeed": fast}, &shot); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(shot.Data)
}

// outermost drops the overflow reports of elements that repeat their parent's
// (same kind, same amount, listed right after it), keeping the list readable.
func outermost(os []Overflow) []Overflow {
	var out []Overflow
	for _, o := range os {
		if n := len(out); n > 0 && out[n-1].Kind == o.Kind && out[n-1].Pixels == o.Pixels {
			continue
		}
		out = append(out, o)
	}
	return out
}

func (s *session) eval(ctx context.Context, expr string, out any) error {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := s.call(ctx, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r); err != nil {
		return err
	}
	if r.Exception != nil {
		return fmt.Errorf("evaluate: %s %s", r.Exception.Text, r.Exception.Exception.Description)
	}
	if out != nil {
		return json.Unmarshal(r.Result.Value, out)
	}
	return nil
}

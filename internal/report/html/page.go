// Package html builds the self-contained HTML reports: one file with inline CSS
// (light and dark), inline SVG charts drawn here, and no network at all (a
// Content-Security-Policy forbids every request, and every script but the
// page's own, allowed by its hash). It formats and lays
// out values it is given; it computes no statistic. The same input gives
// byte-identical output.
package html

import (
	"bytes"
	"html"
	"io"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/report/checkreport"
)

// Esc escapes user-controlled text for HTML text and attribute values: control
// characters become spaces, format characters (bidi overrides and isolates,
// zero-width characters: Unicode Cf) a visible (U+XXXX), as in the Markdown and
// terminal reports, so an id cannot reorder what a reader sees; invalid UTF-8
// becomes U+FFFD.
func Esc(s string) string {
	return html.EscapeString(format.SanitizeText(s))
}

// Page is an HTML document under construction.
type Page struct {
	title string
	body  bytes.Buffer
	ids   int // element ids are numbered in build order (deterministic)
	// script, when set, is the page's one inline script, allowed by its hash
	// in the CSP; data is the JSON it reads (a data block, never executed).
	script, data string
}

// Script sets the page's inline script and the JSON data it renders from
// (id "rg-data"). data must be JSON whose strings escape '<' (encoding/json
// does), so that it cannot end its element.
func (p *Page) Script(js, data string) { p.script, p.data = js, data }

// CSP is the page's Content-Security-Policy: nothing may be fetched (no
// default source), the style sheet and the script are the page's own, each
// allowed by its SHA-256 (no 'unsafe-inline'), images only as data: URLs.
func (p *Page) CSP() string {
	c := "default-src 'none'; style-src " + scriptHash(css) + "; img-src data:"
	if p.script != "" {
		c += "; script-src " + scriptHash(p.script)
	}
	return c + "; base-uri 'none'; form-action 'none'"
}

// NewPage starts a page with a title (shown as its heading).
func NewPage(title string) *Page { return &Page{title: title} }

func (p *Page) id(prefix string) string {
	p.ids++
	return prefix + strconv.Itoa(p.ids)
}

// Raw appends trusted markup built by this package.
func (p *Page) raw(s string) { p.body.WriteString(s) }

// Subtitle adds a line of context (already plain text) under the heading.
func (p *Page) Subtitle(text string) { p.raw(`<p class="sub">` + Esc(text) + "</p>\n") }

// Section starts a titled section; sections are flat (each closes the last).
func (p *Page) Section(title string) {
	p.raw(`<h2>` + Esc(title) + "</h2>\n")
}

// Para adds a paragraph of plain text.
func (p *Page) Para(text string) { p.raw("<p>" + Esc(text) + "</p>\n") }

// markedPara adds a paragraph of a report's figures (never a name) whose
// FlagMark marks are shown as flag(note) (marked).
func (p *Page) markedPara(text, note string) { p.raw("<p>" + marked(text, note) + "</p>\n") }

// Note adds a small explanatory paragraph.
func (p *Page) Note(text string) { p.raw(`<p class="note">` + Esc(text) + "</p>\n") }

// List adds a bulleted list of plain-text items.
func (p *Page) List(items []string) {
	if len(items) == 0 {
		return
	}
	p.raw("<ul>\n")
	for _, it := range items {
		p.raw("<li>" + Esc(it) + "</li>\n")
	}
	p.raw("</ul>\n")
}

// Details puts the blocks added by fill in a collapsed section.
func (p *Page) Details(summary string, fill func()) {
	p.raw("<details><summary>" + Esc(summary) + "</summary>\n")
	fill()
	p.raw("</details>\n")
}

// Indicator is one headline figure.
type Indicator struct {
	Label  string // what it is
	Value  string // the figure, formatted
	Detail string // n, interval or a qualification
	// Flag, when set, is the footnote of the interval that ends Detail,
	// which the report marks unreliable: the card shows the mark after it
	// (flag) and the footnote at its foot. After is the rest of the
	// detail, shown after the mark (flagged or not).
	Flag, After string
}

// Indicators adds the row of headline figures.
func (p *Page) Indicators(ins []Indicator) {
	p.raw(`<div class="kpis">` + "\n")
	for _, in := range ins {
		p.raw(`<div class="kpi"><div class="kpi-label">` + Esc(in.Label) + `</div><div class="kpi-value">` + Esc(in.Value) + `</div>`)
		if in.Detail+in.After != "" {
			mark := ""
			if in.Flag != "" {
				mark = flag(in.Flag)
			}
			p.raw(`<div class="kpi-detail">` + Esc(in.Detail) + mark + Esc(in.After) + `</div>`)
		}
		if in.Flag != "" {
			p.raw(`<div class="kpi-detail">` + Esc(in.Flag) + `</div>`)
		}
		p.raw("</div>\n")
	}
	p.raw("</div>\n")
}

// Grid puts the blocks added by each func side by side on a wide screen (one
// below the other on a narrow one).
func (p *Page) Grid(blocks ...func()) {
	p.raw(`<div class="grid">` + "\n")
	for _, b := range blocks {
		p.raw(`<div class="cell">` + "\n")
		b()
		p.raw("</div>\n")
	}
	p.raw("</div>\n")
}

// Cell is one table cell: a main text and an optional second line (an
// interval, a count) in small type.
type Cell struct {
	Text, Sub string
	Num       bool // right-aligned, tabular figures
	Strong    bool
	// Href makes Text a link: a relative path the caller has validated (the
	// history's reports/NAME.html), escaped here like every attribute.
	Href string
	// Flag, when set, is the footnote of the unreliable mark (FlagMark)
	// that Text or Sub carries after an interval the report marks
	// unreliable, as the text and Markdown reports write it: each mark is
	// shown as flag(Flag). Set it only on a cell of a report's figures,
	// never on one holding a name. The table's Foot carries the footnote.
	Flag string
}

// Table is a data table with a caption.
type Table struct {
	Caption string
	Head    []string
	NumCols []bool // right-aligned columns (len(Head) or nil)
	Rows    [][]Cell
	Foot    string // a note under the table
	// Cards turns each row into a card on a narrow screen (each cell with
	// its column's heading): a table too wide for a phone.
	Cards bool
}

// Table adds a table.
func (p *Page) Table(t Table) {
	if t.Cards {
		p.raw(`<div class="table"><table class="cards">`)
	} else {
		p.raw(`<div class="table"><table>`)
	}
	if t.Caption != "" {
		p.raw("<caption>" + Esc(t.Caption) + "</caption>")
	}
	p.raw("<thead><tr>")
	for i, h := range t.Head {
		cls := ""
		if i < len(t.NumCols) && t.NumCols[i] {
			cls = ` class="num"`
		}
		p.raw(`<th scope="col"` + cls + ">" + Esc(h) + "</th>")
	}
	p.raw("</tr></thead>\n<tbody>\n")
	for _, row := range t.Rows {
		p.raw("<tr>")
		for i, c := range row {
			tag := "td"
			if i == 0 {
				tag = `th scope="row"`
			}
			cls := ""
			if c.Num || (i < len(t.NumCols) && t.NumCols[i]) {
				cls = ` class="num"`
			}
			text := marked(c.Text, c.Flag)
			if c.Strong {
				text = "<strong>" + text + "</strong>"
			}
			if c.Href != "" {
				text = `<a href="` + Esc(c.Href) + `">` + text + "</a>"
			}
			label := ""
			if t.Cards && i > 0 && i < len(t.Head) {
				label = ` data-label="` + Esc(t.Head[i]) + `"`
			}
			p.raw("<" + tag + cls + label + ">")
			if label != "" {
				p.raw(`<span class="cv">`)
			}
			p.raw(text)
			if c.Sub != "" {
				p.raw(`<span class="ci">` + marked(c.Sub, c.Flag) + "</span>")
			}
			if label != "" {
				p.raw("</span>")
			}
			p.raw("</" + strings.Fields(tag)[0] + ">")
		}
		p.raw("</tr>\n")
	}
	p.raw("</tbody></table></div>\n")
	if t.Foot != "" {
		p.Note(t.Foot)
	}
}

// FlagMark follows an interval the report marks unreliable (its method's
// simulated coverage at its n is below 0.95: the JSON's "unreliable"), as
// in the text and Markdown reports; the footnote that explains it is
// theirs (checkreport.UnreliableNote, comparereport.UnreliableLine, …).
const FlagMark = checkreport.UnreliableMark

// flag is the mark of an unreliable interval: FlagMark as an abbreviation
// whose title is its footnote note (without the mark that opens it), for a
// pointer's hover and a screen reader; the footnote itself is shown under
// the table or card.
func flag(note string) string {
	return `<abbr class="flag" title="` + Esc(strings.TrimPrefix(note, FlagMark+" ")) + `">` + FlagMark + "</abbr>"
}

// marked is Esc(s) with each FlagMark of s shown as flag(note); s alone
// when note is "". s is a report's figures, never a name.
func marked(s, note string) string {
	e := Esc(s)
	if note == "" {
		return e
	}
	return strings.ReplaceAll(e, FlagMark, flag(note))
}

// noteIf is note when unreliable, else "".
func noteIf(unreliable bool, note string) string {
	if unreliable {
		return note
	}
	return ""
}

// WriteTo writes the whole document.
func (p *Page) WriteTo(w io.Writer) (int64, error) {
	var out bytes.Buffer
	out.Grow(p.body.Len() + len(css) + 512)
	out.WriteString(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="`)
	out.WriteString(p.CSP())
	out.WriteString(`">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="generator" content="retrieval-gate">
<title>`)
	out.WriteString(Esc(p.title))
	out.WriteString("</title>\n<style>")
	out.WriteString(css)
	out.WriteString("</style>\n</head>\n<body>\n<main>\n<h1>")
	out.WriteString(Esc(p.title))
	out.WriteString("</h1>\n")
	out.Write(p.body.Bytes())
	out.WriteString("</main>\n")
	if p.script != "" {
		out.WriteString(`<script type="application/json" id="rg-data">`)
		out.WriteString(p.data)
		out.WriteString("</script>\n<script>")
		out.WriteString(p.script)
		out.WriteString("</script>\n")
	}
	out.WriteString("</body>\n</html>\n")
	n, err := w.Write(out.Bytes())
	return int64(n), err
}

// Fmt formats a value as every report does (format.Num: 3 decimals, "—" when undefined).
func Fmt(v float64) string { return format.Num(v) }

// FmtCI formats a 95% interval as "lo–hi" (each end by format.Num).
func FmtCI(ci [2]float64) string { return format.Num(ci[0]) + "–" + format.Num(ci[1]) }

// Count formats an integer with thousands separators (format.Thousands: 100,000).
func Count(n int) string { return format.Thousands(n) }

// plural is one when n is 1, else many.
func plural[N ~int | ~int64](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

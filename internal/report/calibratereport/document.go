// Package calibratereport is the typed document of `calibrate` (schema
// retrieval-gate/calibration@1): built from a calibrate.Result in one place
// (New), written as the --json report, read back by Read, and rendered as text
// and Markdown. The renderers take the document and do no arithmetic.
package calibratereport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/calibrate"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
	"github.com/retrieval-gate/retrieval-gate/internal/report/readback"
)

// Schema is the schema id of the calibration JSON.
const Schema = "retrieval-gate/calibration@1"

// Document is the calibration report. Struct fields are declared in alphabetical
// order of their JSON names, so the output has sorted keys at every level.
// "gates" lists every gate (kappa:NAME, unpaired:NAME, lock, git-anchoring) as
// every report does. Failed and NumBins are for the renderers; Read derives
// them (Failed from the gates).
type Document struct {
	Bins           []format.Float        `json:"bins"`
	BlindLabels    *BlindLabels          `json:"blind_labels"`
	CarriedOver    *CarriedOver          `json:"carried_over"`
	Dimensions     map[string]*Dimension `json:"dimensions"`
	Gates          []gatetable.Entry     `json:"gates"`
	GitAnchoring   *GitAnchoring         `json:"git_anchoring"`
	KappaWeighting string                `json:"kappa_weighting"`
	Lock           Lock                  `json:"lock"`
	MaxUnpaired    *string               `json:"max_unpaired"`
	MinKappa       format.Float          `json:"min_kappa"`
	Owner          string                `json:"owner,omitempty"`
	PanelAdoption  *PanelAdoption        `json:"panel_adoption,omitempty"`
	Raters         string                `json:"raters"`
	Schema         string                `json:"schema"`
	Verdict        outcome.Status        `json:"verdict"`

	Failed  []string `json:"-"` // names of the failed gates, in order
	NumBins int      `json:"-"`
}

// Dimension is one dimension's calibration. CI95Method says how ci95 was
// computed (null without one) and Unreliable that its method covers less
// than 0.95 at this n in simulation (marked † in the text and Markdown); a
// document written before them has neither key and reads as unmarked.
type Dimension struct {
	Agreement     *format.Float    `json:"agreement"`
	CarriedOver   bool             `json:"carried_over"`
	CI95          *[2]format.Float `json:"ci95"`
	CI95Method    *string          `json:"ci95_method"`
	Confusion     [][]int          `json:"confusion"`
	Construct     string           `json:"construct"`
	Constructs    Constructs       `json:"constructs"`
	Disagreements Disagreements    `json:"disagreements"`
	Gated         bool             `json:"gated"`
	// Invalid holds the numbers of a construct-mismatch dimension, kept apart from
	// the measurement fields (which are null): they compare different constructs.
	Invalid       *Measurement   `json:"invalid_measurement,omitempty"`
	Kappa         *format.Float  `json:"kappa"`
	N             int            `json:"n"`
	Notes         []string       `json:"notes"`
	Panel         *Panel         `json:"panel"`
	Status        outcome.Status `json:"status"`
	Unpaired      Unpaired       `json:"unpaired"`
	Unreliable    bool           `json:"unreliable"`
	Violations    []Violation    `json:"violations"`
	WeightedKappa *format.Float  `json:"weighted_kappa"`

	Name string `json:"-"`
}

type Constructs struct {
	// Assigned: neither side declared a construct (a --human-sheet and its
	// --judge-qrels): both were read as the lock's, Human and Judge are empty
	// and the construct guard had nothing to check. Absent otherwise.
	Assigned bool `json:"assigned,omitempty"`
	// Definition is the lock's definition of its construct, when it has one.
	Definition string   `json:"definition,omitempty"`
	Human      []string `json:"human"`
	Judge      []string `json:"judge"`
	Lock       string   `json:"lock"`
}

type Disagreement struct {
	CaseID   string `json:"case_id"`
	HumanBin int    `json:"human_bin"`
	JudgeBin int    `json:"judge_bin"`
}

type Disagreements struct {
	HumanAboveJudge DisagreementList `json:"human_above_judge"`
	JudgeAboveHuman DisagreementList `json:"judge_above_human"`
}

// DisagreementList is a list of disagreements: the calibration's own
// (New keeps the result's slice, no copy) or those read back. WriteJSON
// streams it (format.JSONStreamer): one disagreement in four at 10M pairs is
// 2.5M of them, whose JSON marshalled whole was a 256 MB buffer.
type DisagreementList []calibrate.Disagreement

// disagreementChunk is how many disagreements StreamJSON marshals at once.
const disagreementChunk = 1024

// StreamJSON writes the list as json.Marshal writes a []Disagreement (an
// empty list as []), a chunk at a time.
func (l DisagreementList) StreamJSON(w io.Writer) error {
	if len(l) == 0 {
		_, err := io.WriteString(w, "[]")
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	chunk := make([]Disagreement, 0, min(len(l), disagreementChunk))
	for i := 0; i < len(l); i += disagreementChunk {
		chunk = chunk[:0]
		for _, d := range l[i:min(i+disagreementChunk, len(l))] {
			chunk = append(chunk, Disagreement(d))
		}
		buf.Reset()
		if err := enc.Encode(chunk); err != nil {
			return err
		}
		b := bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}) // [d,d,…]
		switch {
		case i > 0 && i+disagreementChunk < len(l):
			b[0] = ','
			b = b[:len(b)-1]
		case i > 0:
			b[0] = ','
		case i+disagreementChunk < len(l):
			b = b[:len(b)-1]
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// MarshalJSON is StreamJSON's bytes, for encoders other than WriteJSON.
func (l DisagreementList) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	err := l.StreamJSON(&b)
	return b.Bytes(), err
}

// UnmarshalJSON reads a list of Disagreements.
func (l *DisagreementList) UnmarshalJSON(b []byte) error {
	var ds []Disagreement
	if err := json.Unmarshal(b, &ds); err != nil {
		return err
	}
	*l = make(DisagreementList, len(ds))
	for i, d := range ds {
		(*l)[i] = calibrate.Disagreement(d)
	}
	return nil
}

// Measurement is a dimension's numbers; ci95_method and unreliable as in
// Dimension.
type Measurement struct {
	Agreement     *format.Float    `json:"agreement"`
	CI95          *[2]format.Float `json:"ci95"`
	CI95Method    *string          `json:"ci95_method"`
	Kappa         *format.Float    `json:"kappa"`
	Unreliable    bool             `json:"unreliable"`
	WeightedKappa *format.Float    `json:"weighted_kappa"`
}

// Unpaired lists the unpaired labels; with --max-unpaired, a gated
// dimension also has the number allowed and whether it is over that limit.
type Unpaired struct {
	Allowed   *int     `json:"allowed"`
	HumanOnly []string `json:"human_only"`
	JudgeOnly []string `json:"judge_only"`
	OverLimit bool     `json:"over_limit"`
}

type Violation struct {
	CaseID string `json:"case_id"`
	Reason string `json:"reason"`
}

type Lock struct {
	// Adoption is the panel adoption the lock declares since the base ref,
	// accepted there (the base is single-rater): the changes it covers are
	// listed here, not under changed.
	Adoption *LockAdoption `json:"adoption,omitempty"`
	Base     *string       `json:"base"`
	Changed  []string      `json:"changed"`
	OK       bool          `json:"ok"`
}

// LockAdoption is a declared panel adoption accepted against the base ref.
type LockAdoption struct {
	CarriedOver []string `json:"carried_over"`
	Changes     []string `json:"changes"`
	Reason      string   `json:"reason"`
}

// PanelAdoption is the lock's record of its move to a rater panel.
type PanelAdoption struct {
	CarriedOver []string `json:"carried_over"`
	Reason      string   `json:"reason"`
}

type GitAnchoring struct {
	HumanCommit string   `json:"human_commit"`
	JudgeCommit string   `json:"judge_commit"`
	OK          bool     `json:"ok"`
	Reasons     []string `json:"reasons"`
}

func optFloat(f float64) *format.Float {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	v := format.Float(f)
	return &v
}

func optCI(ci [2]float64) *[2]format.Float {
	if math.IsNaN(ci[0]) || math.IsNaN(ci[1]) {
		return nil
	}
	v := format.CI(ci)
	return &v
}

// val is an optional number as a float64, NaN when absent.
func val(f *format.Float) float64 {
	if f == nil {
		return math.NaN()
	}
	return f.V()
}

func valCI(ci *[2]format.Float) [2]float64 {
	if ci == nil {
		return [2]float64{math.NaN(), math.NaN()}
	}
	return [2]float64{ci[0].V(), ci[1].V()}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// New builds the document of a calibration: the one place the domain result
// becomes what the reports show. Under construct-mismatch the measurement fields
// (agreement, kappa, weighted_kappa, ci95) are null and the numbers are kept
// under invalid_measurement.
func New(r *calibrate.Result) *Document {
	out := &Document{
		Bins:           format.Floats(r.Lock.Bins),
		Dimensions:     map[string]*Dimension{},
		KappaWeighting: r.Lock.KappaWeighting,
		Lock:           Lock{Changed: []string{}, OK: true},
		MinKappa:       format.Float(r.Lock.MinKappa),
		Schema:         Schema,
		Verdict:        r.Verdict(),
		Failed:         r.Failed(),
		NumBins:        r.Lock.NumBins(),
		Gates:          gatetable.FromOutcome(r.Gates),
		Raters:         r.Lock.Raters,
		CarriedOver:    newCarriedOver(r.CarriedOver),
		BlindLabels:    newBlind(r.Blind),
	}
	if lc := r.LockCheck; lc != nil {
		base := lc.Base
		out.Lock = Lock{Base: &base, Changed: lockChangeTexts(lc.Changed), OK: len(lc.Changed) == 0}
		if a := lc.Adoption; a != nil {
			out.Lock.Adoption = &LockAdoption{CarriedOver: nonNil(a.CarriedOver), Changes: lockChangeTexts(a.Covered), Reason: a.Reason}
		}
	}
	out.Owner = r.Lock.Owner
	if a := r.Lock.Adoption; a != nil {
		out.PanelAdoption = &PanelAdoption{CarriedOver: nonNil(a.CarriedOver), Reason: a.Reason}
	}
	if ga := r.GitAnchor; ga != nil {
		reasons := make([]string, len(ga.Findings))
		for i, f := range ga.Findings {
			reasons[i] = gatetable.Reason([]outcome.Clause{f})
		}
		out.GitAnchoring = &GitAnchoring{ga.HumanCommit, ga.JudgeCommit, ga.OK, reasons}
	}
	if r.MaxUnpaired != nil {
		spec := r.MaxUnpaired.Spec
		out.MaxUnpaired = &spec
	}
	for _, d := range r.Dimensions {
		dj := &Dimension{
			Confusion: d.Confusion,
			Construct: d.Construct,
			Constructs: Constructs{
				Assigned: d.ConstructsAssigned, Definition: r.Lock.Dimensions[d.Name].Definition,
				Human: nonNil(d.HumanConstructs), Judge: nonNil(d.JudgeConstructs), Lock: d.Construct,
			},
			Disagreements: Disagreements{
				HumanAboveJudge: d.HumanAbove, JudgeAboveHuman: d.JudgeAbove,
			},
			Gated:       d.Gated,
			CarriedOver: d.CarriedOver,
			Panel:       newPanel(d.Panel),
			Name:        d.Name,
			N:           d.N,
			Notes:       noteTexts(d.Notes),
			Status:      d.Status,
			Unpaired:    Unpaired{HumanOnly: nonNil(d.HumanOnly), JudgeOnly: nonNil(d.JudgeOnly), OverLimit: d.UnpairedOver},
			Violations:  []Violation{},
		}
		if d.UnpairedAllowed >= 0 {
			allowed := d.UnpairedAllowed
			dj.Unpaired.Allowed = &allowed
		}
		for _, v := range d.Violations {
			dj.Violations = append(dj.Violations, Violation{v.CaseID, ViolationReason(v)})
		}
		m := &Measurement{Agreement: optFloat(d.Agreement), CI95: optCI(d.CI95), Kappa: optFloat(d.Kappa), WeightedKappa: optFloat(d.WeightedKappa)}
		if m.CI95 != nil {
			method := d.CIMethod
			m.CI95Method, m.Unreliable = &method, d.Unreliable
		}
		if d.Valid {
			dj.Agreement, dj.CI95, dj.CI95Method, dj.Kappa, dj.Unreliable, dj.WeightedKappa = m.Agreement, m.CI95, m.CI95Method, m.Kappa, m.Unreliable, m.WeightedKappa
		} else {
			dj.Invalid = m
		}
		out.Dimensions[d.Name] = dj
	}
	return out
}

// WriteJSON writes the document as the --json report: sorted keys, two-space
// indent, full-precision numbers, undefined numbers as null.
func (d *Document) WriteJSON(w io.Writer) error { return format.WriteJSON(w, d) }

// ReadParsed reads a calibration document written by WriteJSON, which
// readback.Parse has read and parsed (data and its tree: report.Read parses a
// document once to learn its schema). It is checked first as strictly as
// calibrate writes it (validate): a value that is wrong is an *input.Error at
// its line, whose File is "" (the caller names the file).
func ReadParsed(data []byte, root *jsonpos.Value) (*Document, error) {
	d := &Document{}
	if err := readback.Decode(data, root, validate, d, "calibration report"); err != nil {
		return nil, err
	}
	if d.Schema != Schema {
		return nil, fmt.Errorf("schema %q is not %q", d.Schema, Schema)
	}
	d.NumBins = len(d.Bins) + 1
	d.Failed = gatetable.Failed(d.Gates)
	for name, dim := range d.Dimensions {
		dim.Name = name
	}
	return d, nil
}

// dimensions returns the dimensions by name.
func (d *Document) dimensions() []*Dimension {
	names := make([]string, 0, len(d.Dimensions))
	for n := range d.Dimensions {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]*Dimension, len(names))
	for i, n := range names {
		out[i] = d.Dimensions[n]
	}
	return out
}

// valid reports whether the dimension's numbers measure the lock's construct.
func (dim *Dimension) valid() bool { return dim.Invalid == nil }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// lockConst prints a frozen constant of the lock exactly as it reads back.
func lockConst(f format.Float) string { return format.Full(f.V()) }

func (d *Document) lockSummary() string {
	s := make([]string, len(d.Bins))
	for i, b := range d.Bins {
		s[i] = lockConst(b)
	}
	out := fmt.Sprintf("bins [%s] (%d bins), kappa_weighting %s, min_kappa %s",
		strings.Join(s, ", "), d.NumBins, d.KappaWeighting, lockConst(d.MinKappa))
	if d.Raters != "" {
		out += ", " + ratersRule(d.Raters)
	}
	if d.Owner != "" {
		out += ", owner " + strconv.Quote(d.Owner) + " (adjudicates; never a panel rater)"
	}
	if a := d.PanelAdoption; a != nil {
		out += ", adopted from single rater: " + adoptionText(a.Reason, a.CarriedOver)
	}
	if d.MaxUnpaired != nil {
		out += ", max_unpaired " + *d.MaxUnpaired + " per gated dimension"
	}
	return out
}

// numbers are a dimension's agreement, kappa, weighted kappa and CI for the
// tables, or invalid (a construct mismatch) in each cell but the CI; the CI
// has format.UnreliableMark after it when the document marks it unreliable.
func (dim *Dimension) numbers(invalid string) (ag, k, wk, ci string) {
	if !dim.valid() {
		return invalid, invalid, invalid, format.Missing
	}
	ci = format.Interval(valCI(dim.CI95))
	if dim.unreliable() {
		ci += format.UnreliableMark
	}
	return format.Num(val(dim.Agreement)), format.Num(val(dim.Kappa)), format.Num(val(dim.WeightedKappa)), ci
}

// unreliable reports whether the tables mark the dimension's CI: it has one,
// of a valid measurement, and the document flags it.
func (dim *Dimension) unreliable() bool { return dim.valid() && dim.CI95 != nil && dim.Unreliable }

// UnreliableNote is the footnote of a marked kappa interval: the words every
// report's footnote has, with the n below which calibrate's intervals are
// marked (metrics.UnreliableFor) and the sparse margins on which they are
// marked at any n (metrics.KappaMinBinLabels).
const UnreliableNote = format.UnreliableNote + " (the weighted kappa's BCa interval below 30 paired cases, its Wilson-disagreement interval below 50, and either at any n when a side used one bin only or a bin fewer than 3 times; docs/statistics.md)"

// anyUnreliable reports whether a dimension's CI is marked.
func (d *Document) anyUnreliable() bool {
	for _, dim := range d.Dimensions {
		if dim.unreliable() {
			return true
		}
	}
	return false
}

// Text writes the terminal report: a table of the dimensions, then the
// violations, unpaired labels, lock and git checks, and the verdict.
func (d *Document) Text(w io.Writer) error {
	var b strings.Builder
	san := format.SanitizeText
	fmt.Fprintf(&b, "calibrate: %s\n", san(d.lockSummary()))
	fmt.Fprintf(&b, "%-20s %-5s %5s %9s %9s %9s  %-18s %s\n", "dimension", "gated", "n", "agreement", "kappa", "w.kappa", "ci95 (w.kappa)", "status")
	dims := d.dimensions()
	for _, dim := range dims {
		ag, k, wk, ci := dim.numbers("invalid")
		fmt.Fprintf(&b, "%-20s %-5s %5d %9s %9s %9s  %-18s %s\n", san(dim.Name), yesNo(dim.Gated), dim.N, ag, k, wk, ci, dim.statusCell())
	}
	if d.anyUnreliable() {
		fmt.Fprintf(&b, "%s\n", UnreliableNote)
	}
	for _, dim := range dims {
		name := san(dim.Name)
		for _, n := range dim.Notes {
			fmt.Fprintf(&b, "  %s: %s\n", name, san(n))
		}
		for _, n := range dim.panelNotes(san) {
			fmt.Fprintf(&b, "  %s: %s\n", name, n)
		}
		if p := dim.Panel; p != nil {
			for _, a := range p.Adjudications[:min(len(p.Adjudications), textListed)] {
				fmt.Fprintf(&b, "  %s: adjudicated %s\n", name, adjudicationLine(a, san))
			}
			if extra := len(p.Adjudications) - textListed; extra > 0 {
				fmt.Fprintf(&b, "  %s: … and %d more adjudications (all in --json and --markdown)\n", name, extra)
			}
		}
		for _, v := range dim.Violations[:min(len(dim.Violations), textListed)] {
			fmt.Fprintf(&b, "  %s: %s: %s\n", name, san(v.CaseID), san(v.Reason))
		}
		if extra := len(dim.Violations) - textListed; extra > 0 {
			fmt.Fprintf(&b, "  %s: … and %d more violations (all in --json and --markdown)\n", name, extra)
		}
		if ho := dim.Unpaired.HumanOnly; len(ho) > 0 {
			fmt.Fprintf(&b, "  %s: human labels without a judge score: %s\n", name, textIDs(ho))
		}
		if jo := dim.Unpaired.JudgeOnly; len(jo) > 0 {
			fmt.Fprintf(&b, "  %s: judge scores without a human label: %s\n", name, textIDs(jo))
		}
		fmt.Fprintf(&b, "  %s: disagreements: judge above human %d, human above judge %d\n", name,
			len(dim.Disagreements.JudgeAboveHuman), len(dim.Disagreements.HumanAboveJudge))
	}
	switch lk := d.Lock; {
	case lk.Base == nil:
		b.WriteString("lock: not compared with a git ref (use --lock-base)\n")
	case len(lk.Changed) == 0 && lk.Adoption != nil:
		fmt.Fprintf(&b, "lock: unchanged since %s but for the panel adoption it declares (%s)\n", san(*lk.Base), san(adoptionText(lk.Adoption.Reason, lk.Adoption.CarriedOver)))
	case len(lk.Changed) == 0:
		fmt.Fprintf(&b, "lock: unchanged since %s\n", san(*lk.Base))
	default:
		fmt.Fprintf(&b, "lock: CHANGED since %s\n", san(*lk.Base))
		for _, c := range lk.Changed {
			fmt.Fprintf(&b, "  %s\n", san(c))
		}
	}
	if a := d.Lock.Adoption; a != nil {
		for _, c := range a.Changes {
			fmt.Fprintf(&b, "  adopted: %s\n", san(c))
		}
	}
	if ga := d.GitAnchoring; ga != nil {
		if ga.OK {
			fmt.Fprintf(&b, "git anchoring: ok (labels %s, judge %s)\n", shortHash(ga.HumanCommit), shortHash(ga.JudgeCommit))
		} else {
			b.WriteString("git anchoring: FAILED\n")
			for _, s := range ga.Reasons {
				fmt.Fprintf(&b, "  %s\n", san(s))
			}
		}
	}
	d.processText(&b)
	b.WriteString("gates:\n")
	gatetable.Text(&b, d.Gates)
	fmt.Fprintf(&b, "verdict: %s", strings.ToUpper(string(d.Verdict)))
	if len(d.Failed) > 0 {
		fmt.Fprintf(&b, " (%s)", san(strings.Join(d.Failed, ", ")))
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// textListed caps each case list of the terminal report.
const textListed = 20

// textIDs joins at most textListed ids for the terminal.
func textIDs(ids []string) string {
	s := format.SanitizeText(strings.Join(ids[:min(len(ids), textListed)], ", "))
	if len(ids) > textListed {
		s += fmt.Sprintf(" … and %d more", len(ids)-textListed)
	}
	return s
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// Markdown writes the Markdown report, the same text the job summary and the PR
// comment carry. It starts with marker, the hidden comment marker the
// publisher gives (publish.Marker; "" writes none). Every case id, dimension,
// construct, file name and ref is escaped.
func (d *Document) Markdown(w io.Writer, marker string) error {
	var b strings.Builder
	esc := format.EscapeMarkdown
	if marker != "" {
		b.WriteString(marker + "\n")
	}
	icon := "✅"
	if d.Verdict != outcome.Pass {
		icon = "❌"
	}
	fmt.Fprintf(&b, "## %s Judge calibration: %s\n\n", icon, strings.ToUpper(string(d.Verdict)))
	fmt.Fprintf(&b, "Agreement between human labels and the LLM judge, per dimension, on the lock's frozen constants: %s. "+
		"The gate needs weighted kappa ≥ min\\_kappa on every gated dimension, no construct mismatch, no anchoring violation%s%s, and an unchanged lock%s.\n\n",
		esc(d.lockSummary()), d.unpairedRule(), d.processRule(), d.adoptionRule())
	// The interval is weighted kappa's, as the text's "ci95 (w.kappa)" says:
	// the heading names it, so it is not read as the unweighted kappa's.
	b.WriteString("| dimension | gated | n | agreement | kappa | weighted kappa | 95% CI of weighted kappa | status |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---|---|\n")
	dims := d.dimensions()
	for _, dim := range dims {
		ag, k, wk, ci := dim.numbers("not valid")
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s |\n",
			esc(dim.Name), yesNo(dim.Gated), dim.N, ag, k, wk, ci, esc(dim.statusCell()))
	}
	b.WriteString("\n")
	if d.anyUnreliable() {
		fmt.Fprintf(&b, "%s\n\n", UnreliableNote)
	}
	switch lk := d.Lock; {
	case lk.Base == nil:
		b.WriteString("**Lock:** not compared with a git ref (run with `--lock-base`).\n\n")
	case len(lk.Changed) == 0:
		fmt.Fprintf(&b, "**Lock:** unchanged since %s.\n\n", esc(*lk.Base))
	default:
		fmt.Fprintf(&b, "**Lock:** ❌ the frozen constants changed since %s; a calibration is only comparable under the same constants:\n\n", esc(*lk.Base))
		for _, c := range lk.Changed {
			fmt.Fprintf(&b, "- %s\n", esc(c))
		}
		b.WriteString("\n")
	}
	if a := d.Lock.Adoption; a != nil && d.Lock.Base != nil {
		fmt.Fprintf(&b, "**Panel adoption:** the lock declares the one-time move from the single-rater framing at %s (%s); it covers:\n\n",
			esc(*d.Lock.Base), esc(adoptionText(a.Reason, a.CarriedOver)))
		for _, c := range a.Changes {
			fmt.Fprintf(&b, "- %s\n", esc(c))
		}
		b.WriteString("\n")
	}
	if ga := d.GitAnchoring; ga != nil {
		if ga.OK {
			fmt.Fprintf(&b, "**Git anchoring:** the labels' last commit %s is an ancestor of the judge scores' last commit %s.\n\n",
				esc(shortHash(ga.HumanCommit)), esc(shortHash(ga.JudgeCommit)))
		} else {
			b.WriteString("**Git anchoring:** ❌\n\n")
			for _, s := range ga.Reasons {
				fmt.Fprintf(&b, "- %s\n", esc(s))
			}
			b.WriteString("\n")
		}
	}
	d.processMarkdown(&b)
	if len(d.Gates) > 0 {
		b.WriteString("### Gates\n\n")
		gatetable.Markdown(&b, d.Gates)
		b.WriteString("\n")
	}
	for _, dim := range dims {
		fmt.Fprintf(&b, "### %s\n\n", esc(dim.Name))
		if dim.Constructs.Assigned {
			fmt.Fprintf(&b, "Construct (lock): %s. The labelling sheet and the judge's qrels declare no construct: both are read as the lock's, so the construct guard has nothing to check.\n\n",
				esc(dim.Construct))
		} else {
			fmt.Fprintf(&b, "Construct (lock): %s. Human labels declare %s; judge scores declare %s.\n\n",
				esc(dim.Construct), list(dim.Constructs.Human), list(dim.Constructs.Judge))
		}
		if def := dim.Constructs.Definition; def != "" {
			fmt.Fprintf(&b, "Definition (lock): %s\n\n", esc(def))
		}
		switch dim.Status {
		case calibrate.StatusConstructMismatch:
			b.WriteString("> **Construct mismatch.** The human labels and the judge scores do not both measure the lock's construct, " +
				"so they measure different things: their agreement is not a valid measurement and is not reported as one " +
				"(the JSON keeps the numbers under `invalid_measurement`).\n\n")
		case calibrate.StatusAnchoringViolation:
			b.WriteString("> **Anchoring violation.** Some human labels are not older than the judge score they are paired with, " +
				"so the labellers may have seen the judge's answer; agreement on them is not independent evidence.\n\n")
		}
		for _, n := range dim.Notes {
			fmt.Fprintf(&b, "- %s\n", esc(n))
		}
		pn := dim.panelNotes(esc)
		for _, n := range pn {
			fmt.Fprintf(&b, "- %s\n", n)
		}
		if len(dim.Notes)+len(pn) > 0 {
			b.WriteString("\n")
		}
		if p := dim.Panel; p != nil && len(p.Adjudications) > 0 {
			fmt.Fprintf(&b, "<details open><summary>Adjudications: %d</summary>\n\n", len(p.Adjudications))
			for _, a := range p.Adjudications[:min(len(p.Adjudications), MaxListed)] {
				fmt.Fprintf(&b, "- %s\n", adjudicationLine(a, esc))
			}
			more(&b, len(p.Adjudications))
			b.WriteString("\n</details>\n\n")
		}
		if dim.N > 0 {
			b.WriteString("Confusion matrix (rows: human bin, columns: judge bin):\n\n|  |")
			for j := range dim.Confusion {
				fmt.Fprintf(&b, " judge %d |", j)
			}
			b.WriteString("\n|---|")
			for range dim.Confusion {
				b.WriteString("---:|")
			}
			b.WriteString("\n")
			for h, row := range dim.Confusion {
				fmt.Fprintf(&b, "| **human %d** |", h)
				for _, c := range row {
					fmt.Fprintf(&b, " %d |", c)
				}
				b.WriteString("\n")
			}
			b.WriteString("\n")
		}
		writeCases := func(title string, ds DisagreementList) {
			if len(ds) == 0 {
				fmt.Fprintf(&b, "%s: none.\n\n", title)
				return
			}
			fmt.Fprintf(&b, "<details><summary>%s: %d</summary>\n\n", title, len(ds))
			for _, x := range ds[:min(len(ds), MaxListed)] {
				fmt.Fprintf(&b, "- case %s: human bin %d, judge bin %d\n", esc(x.CaseID), x.HumanBin, x.JudgeBin)
			}
			more(&b, len(ds))
			b.WriteString("\n</details>\n\n")
		}
		writeCases("Judge above human", dim.Disagreements.JudgeAboveHuman)
		writeCases("Human above judge", dim.Disagreements.HumanAboveJudge)
		if len(dim.Violations) > 0 {
			fmt.Fprintf(&b, "<details open><summary>Violations: %d</summary>\n\n", len(dim.Violations))
			for _, v := range dim.Violations[:min(len(dim.Violations), MaxListed)] {
				fmt.Fprintf(&b, "- case %s: %s\n", esc(v.CaseID), esc(v.Reason))
			}
			more(&b, len(dim.Violations))
			b.WriteString("\n</details>\n\n")
		}
		ho, jo := dim.Unpaired.HumanOnly, dim.Unpaired.JudgeOnly
		if len(ho)+len(jo) > 0 {
			fmt.Fprintf(&b, "<details><summary>Unpaired: %d human label(s) without a judge score, %d judge score(s) without a human label</summary>\n\n",
				len(ho), len(jo))
			for _, id := range ho[:min(len(ho), MaxListed)] {
				fmt.Fprintf(&b, "- case %s: human only\n", esc(id))
			}
			more(&b, len(ho))
			for _, id := range jo[:min(len(jo), MaxListed)] {
				fmt.Fprintf(&b, "- case %s: judge only\n", esc(id))
			}
			more(&b, len(jo))
			b.WriteString("\n</details>\n\n")
		}
	}
	if len(d.Failed) > 0 {
		fmt.Fprintf(&b, "**Failed:** %s\n", esc(strings.Join(d.Failed, ", ")))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// statusCell is a dimension's status for the tables, with the --max-unpaired
// failure beside it (the status itself reports the kappa).
func (dim *Dimension) statusCell() string {
	if dim.Unpaired.OverLimit {
		return string(dim.Status) + ", too many unpaired"
	}
	return string(dim.Status)
}

// adoptionRule is the clause of the Markdown's gate sentence on a panel
// adoption declared since the base.
func (d *Document) adoptionRule() string {
	if d.Lock.Adoption == nil {
		return ""
	}
	return " (but for the panel adoption it declares)"
}

// unpairedRule is the --max-unpaired clause of the Markdown's gate sentence.
func (d *Document) unpairedRule() string {
	if d.MaxUnpaired == nil {
		return ""
	}
	return ", at most " + format.EscapeMarkdown(*d.MaxUnpaired) + " unpaired labels in a gated dimension"
}

// MaxListed caps each case list of the calibration Markdown (a PR comment has a
// size limit); the JSON lists every case.
const MaxListed = 50

func more(b *strings.Builder, total int) {
	if total > MaxListed {
		fmt.Fprintf(b, "- … and %d more (every case is in the JSON report)\n", total-MaxListed)
	}
}

func list(ss []string) string {
	if len(ss) == 0 {
		return "nothing (no labels)"
	}
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = format.EscapeMarkdown(s)
	}
	return strings.Join(q, ", ")
}

// timeFormat writes a label's timestamp: RFC 3339 with its zone, the
// fraction only when there is one.
const timeFormat = "2006-01-02T15:04:05.999999999Z07:00"

// ViolationReason is the sentence of a violation: what the label declares or
// when it was made, at its file and line.
func ViolationReason(v calibrate.Violation) string {
	if v.Kind == calibrate.NotEarlier {
		return fmt.Sprintf("labeled_at %s (%s:%d) is not earlier than judged_at %s (%s:%d): the label may have seen the judge's score",
			v.LabeledAt.Format(timeFormat), v.File, v.Line, v.JudgedAt.Format(timeFormat), v.JudgeFile, v.JudgeLine)
	}
	return fmt.Sprintf("%s construct %q (%s:%d) differs from the lock's %q", v.Side, v.Construct, v.File, v.Line, v.Want)
}

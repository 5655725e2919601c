package calibratereport

import (
	"fmt"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/calibrate"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
)

// The ADR-0028 process in the calibration document: the rater panel of each
// dimension (its raters, Krippendorff's alpha with its n and interval, the
// adjudications), the carried-over dimensions' comparison with the base ref and
// the blind-relabelling check per rater. The domain gives codes and numbers;
// the words are here.

// Panel is a dimension's rater panel (raters: panel in the lock).
type Panel struct {
	Adjudications []Adjudication `json:"adjudications"`
	// Alpha is Krippendorff's alpha of the panel with the lock's kappa weights
	// as its disagreement; null when undefined.
	Alpha             *format.Float    `json:"alpha"`
	AlphaBelowMinK    bool             `json:"alpha_below_min_kappa"`
	AlphaCI95         *[2]format.Float `json:"alpha_ci95"`
	AlphaCIMethod     *string          `json:"alpha_ci95_method"`
	AlphaCIUnreliable bool             `json:"alpha_ci95_unreliable"`
	Cases             int              `json:"cases"`
	Disagreed         int              `json:"disagreed"`
	N                 int64            `json:"n"` // cases with at least two panel labels
	Raters            []string         `json:"raters"`
	Unadjudicated     []string         `json:"unadjudicated"`
	Values            int64            `json:"values"` // panel labels on those cases
}

// Adjudication is the owner's label on a case the panel disagreed on.
type Adjudication struct {
	Bin       int    `json:"bin"`
	CaseID    string `json:"case_id"`
	File      string `json:"file"`
	Line      int    `json:"line"`
	Median    int    `json:"median"`
	PanelBins []int  `json:"panel_bins"`
	Rater     string `json:"rater"`
}

// CarriedOver is the carried-over dimensions' comparison with the base ref.
type CarriedOver struct {
	Base       string                      `json:"base"`
	Dimensions map[string]CarriedDimension `json:"dimensions"`
	OK         bool                        `json:"ok"`
	Path       string                      `json:"path"`
}

// CarriedDimension is one carried-over dimension: status identical, changed,
// no-base-file or base-invalid.
type CarriedDimension struct {
	Changed []string `json:"changed"`
	Detail  string   `json:"detail,omitempty"`
	Labels  int      `json:"labels"`
	Status  string   `json:"status"`
}

// BlindLabels is the blind-relabelling check (--git-anchoring).
type BlindLabels struct {
	Commits  int          `json:"commits"`
	Labels   int          `json:"labels"`
	NotBlind int          `json:"not_blind"`
	OK       bool         `json:"ok"`
	Raters   []RaterBlind `json:"raters"`
	Shallow  bool         `json:"shallow"`
	Versions int          `json:"versions"`
}

// RaterBlind is one rater's labels ("" for labels without a rater id).
type RaterBlind struct {
	Labels     int              `json:"labels"`
	Rater      string           `json:"rater"`
	Violations []BlindViolation `json:"violations"`
}

// BlindViolation is a label not provably committed before its judge score;
// code is label-uncommitted, judge-uncommitted, same-commit or not-before.
type BlindViolation struct {
	Adjudication bool   `json:"adjudication"`
	CaseID       string `json:"case_id"`
	Code         string `json:"code"`
	Dimension    string `json:"dimension"`
	File         string `json:"file"`
	JudgeCommit  string `json:"judge_commit"`
	JudgedAt     string `json:"judged_at"`
	LabelCommit  string `json:"label_commit"`
	Line         int    `json:"line"`
}

func newPanel(p *calibrate.PanelDimension) *Panel {
	if p == nil {
		return nil
	}
	out := &Panel{
		Adjudications: []Adjudication{}, Alpha: optFloat(p.Alpha), AlphaBelowMinK: p.AlphaBelowMinKappa, AlphaCI95: optCI(p.CI95),
		AlphaCIUnreliable: p.CIUnreliable, Cases: p.Cases, Disagreed: p.Disagreed, N: p.Units, Raters: nonNil(p.Raters),
		Unadjudicated: nonNil(p.Unadjudicated), Values: p.Values,
	}
	if p.CIMethod != "" {
		m := p.CIMethod
		out.AlphaCIMethod = &m
	}
	for _, a := range p.Adjudications {
		out.Adjudications = append(out.Adjudications, Adjudication{Bin: a.Bin, CaseID: a.CaseID, File: a.File, Line: a.Line,
			Median: a.Median, PanelBins: nonNil(a.PanelBins), Rater: a.Rater})
	}
	return out
}

func newCarriedOver(c *calibrate.CarriedOverCheck) *CarriedOver {
	if c == nil {
		return nil
	}
	out := &CarriedOver{Base: c.Base, Path: c.Path, OK: c.OK(), Dimensions: map[string]CarriedDimension{}}
	for _, d := range c.Dimensions {
		out.Dimensions[d.Name] = CarriedDimension{Changed: nonNil(d.Changed), Detail: d.Detail, Labels: d.Labels, Status: string(d.Code)}
	}
	return out
}

func newBlind(b *calibrate.BlindCheck) *BlindLabels {
	if b == nil {
		return nil
	}
	out := &BlindLabels{Commits: b.Commits, OK: b.OK(), Shallow: b.Shallow, Versions: b.Versions, Raters: []RaterBlind{}}
	for _, r := range b.Raters {
		rb := RaterBlind{Labels: r.Labels, Rater: r.Rater, Violations: []BlindViolation{}}
		for _, v := range r.Violations {
			rb.Violations = append(rb.Violations, BlindViolation{Adjudication: v.Adjudication, CaseID: v.CaseID, Code: string(v.Code),
				Dimension: v.Dimension, File: v.File, JudgeCommit: v.JudgeCommit, JudgedAt: v.JudgedAt.Format(timeFormat), LabelCommit: v.LabelCommit, Line: v.Line})
		}
		out.Raters = append(out.Raters, rb)
		out.Labels += r.Labels
		out.NotBlind += len(r.Violations)
	}
	return out
}

// raterName is a rater id as the reports show it.
func raterName(id string) string {
	if id == "" {
		return "(no rater id)"
	}
	return id
}

// alphaCell is the panel's alpha with its interval, or why there is none.
func (p *Panel) alphaCell() (alpha, ci string) {
	alpha, ci = format.Num(val(p.Alpha)), format.Missing
	if p.AlphaCI95 != nil {
		ci = format.Interval(valCI(p.AlphaCI95))
		if p.AlphaCIUnreliable {
			ci += " (n < 30: unreliable)"
		}
	}
	return alpha, ci
}

// panelNotes are the sentences about a dimension's panel, for both renderers
// (esc escapes user text: case ids and rater ids).
func (dim *Dimension) panelNotes(esc func(string) string) []string {
	p := dim.Panel
	if p == nil {
		return nil
	}
	if p.Cases == 0 {
		return []string{"panel: no human label"}
	}
	var out []string
	alpha, ci := p.alphaCell()
	names := make([]string, len(p.Raters))
	for i, r := range p.Raters {
		names[i] = esc(raterName(r))
	}
	s := fmt.Sprintf("panel of %d rater(s) (%s) on %d case(s): Krippendorff's alpha %s, 95%% CI %s, over n = %d case(s) with two or more labels (%d labels)",
		len(p.Raters), strings.Join(names, ", "), p.Cases, alpha, ci, p.N, p.Values)
	switch {
	case p.Alpha == nil:
		s += "; alpha is undefined (no case with two labels, or every label in one bin)"
	case p.AlphaCI95 == nil && p.Disagreed == 0:
		// Not a zero-width interval, and not one the cases cannot support:
		// say why there is none (docs/calibrate.md).
		s += "; its interval cannot be estimated: no case's labels disagree, so every resample of the cases gives alpha 1"
	}
	out = append(out, s)
	if p.AlphaBelowMinK {
		out = append(out, fmt.Sprintf("the panel's own alpha %s is below min_kappa: the judge is held to more agreement than the raters reach with one another", alpha))
	}
	if p.Disagreed > 0 {
		out = append(out, fmt.Sprintf("the panel disagrees on %d case(s): %d adjudicated by the owner, %d compared with the judge at the panel's median bin",
			p.Disagreed, len(p.Adjudications), len(p.Unadjudicated)))
	}
	return out
}

// adjudicationLine is one adjudication as a list item.
func adjudicationLine(a Adjudication, esc func(string) string) string {
	bins := make([]string, len(a.PanelBins))
	for i, b := range a.PanelBins {
		bins[i] = fmt.Sprint(b)
	}
	return fmt.Sprintf("case %s: bin %d by %s (panel bins %s, median %d; %s:%d)", esc(a.CaseID), a.Bin, esc(a.Rater),
		strings.Join(bins, ", "), a.Median, esc(a.File), a.Line)
}

// carriedLine is one carried-over dimension's outcome.
func carriedLine(name string, d CarriedDimension, base string, esc func(string) string) string {
	switch d.Status {
	case string(calibrate.CarriedIdentical):
		return fmt.Sprintf("%s: the %d label(s) are identical to %s", esc(name), d.Labels, esc(base))
	case string(calibrate.CarriedNoBaseFile):
		return fmt.Sprintf("%s: the human labels file does not exist at %s, so its labels cannot be shown unchanged", esc(name), esc(base))
	case string(calibrate.CarriedBaseInvalid):
		return fmt.Sprintf("%s: the human labels file at %s is not a valid labels file (%s)", esc(name), esc(base), esc(d.Detail))
	}
	ids := make([]string, 0, min(len(d.Changed), MaxListed))
	for _, id := range d.Changed[:min(len(d.Changed), MaxListed)] {
		ids = append(ids, esc(id))
	}
	s := fmt.Sprintf("%s: the labels of %d case(s) changed since %s: %s", esc(name), len(d.Changed), esc(base), strings.Join(ids, ", "))
	if len(d.Changed) > MaxListed {
		s += fmt.Sprintf(" … and %d more (every case is in the JSON report)", len(d.Changed)-MaxListed)
	}
	return s
}

// blindReason is why a label is not provably blind.
func blindReason(v BlindViolation) string {
	switch calibrate.BlindCode(v.Code) {
	case calibrate.BlindLabelUncommitted:
		return "the label, with its value, is in no commit"
	case calibrate.BlindJudgeUncommitted:
		return "its judge score is in no commit"
	case calibrate.BlindSameCommit:
		return "first committed together with its judge score in " + shortHash(v.LabelCommit)
	}
	return fmt.Sprintf("first committed in %s, which is not an ancestor of %s, where the judge run it is compared with (judged_at %s) was first committed",
		shortHash(v.LabelCommit), shortHash(v.JudgeCommit), v.JudgedAt)
}

func blindLine(v BlindViolation, esc func(string) string) string {
	what := "label"
	if v.Adjudication {
		what = "adjudication"
	}
	return fmt.Sprintf("%s %s, case %s (%s:%d): %s", esc(v.Dimension), what, esc(v.CaseID), esc(v.File), v.Line, blindReason(v))
}

// blindSummary is the blind-relabelling check's headline.
func (b *BlindLabels) summary() string {
	s := fmt.Sprintf("%d of %d paired human label(s) of %d rater(s) not provably committed before their judge scores (%d commits, %d file versions read)",
		b.NotBlind, b.Labels, len(b.Raters), b.Commits, b.Versions)
	if b.Shallow {
		s += "; the repository is a shallow clone, so commits before its boundary were not read (actions/checkout with fetch-depth: 0 fetches them)"
	}
	return s
}

// ratersRule is the lock's rater framing as the reports state it.
func ratersRule(r string) string {
	if r == labelfile.RatersPanel {
		return "raters panel (several raters per case; the judge is compared with the adjudication, else the panel's median bin)"
	}
	return "raters single (one human label per case)"
}

// carriedDims are the dimensions the lock carries over, by name.
func (d *Document) carriedDims() []string {
	var out []string
	for _, dim := range d.dimensions() {
		if dim.CarriedOver {
			out = append(out, dim.Name)
		}
	}
	return out
}

// hasPanel reports whether a dimension has a rater panel.
func (d *Document) hasPanel() bool {
	for _, dim := range d.Dimensions {
		if dim.Panel != nil {
			return true
		}
	}
	return false
}

// processText writes the terminal lines of the ADR-0028 checks.
func (d *Document) processText(b *strings.Builder) {
	san := format.SanitizeText
	switch co := d.CarriedOver; {
	case co != nil:
		state := "unchanged"
		if !co.OK {
			state = "CHANGED"
		}
		fmt.Fprintf(b, "carried over: %s since %s\n", state, san(co.Base))
		for _, name := range d.carriedDims() {
			if cd, ok := co.Dimensions[name]; ok {
				fmt.Fprintf(b, "  %s\n", carriedLine(name, cd, co.Base, san))
			}
		}
	case len(d.carriedDims()) > 0:
		fmt.Fprintf(b, "carried over: %s not compared with a git ref (use --lock-base)\n", san(strings.Join(d.carriedDims(), ", ")))
	}
	if bl := d.BlindLabels; bl != nil {
		if bl.OK {
			fmt.Fprintf(b, "blind labels: ok (%s)\n", bl.summary())
		} else {
			fmt.Fprintf(b, "blind labels: FAILED (%s)\n", bl.summary())
		}
		for _, r := range bl.Raters {
			fmt.Fprintf(b, "  rater %s: %d label(s), %d not provably blind\n", san(raterName(r.Rater)), r.Labels, len(r.Violations))
			for _, v := range r.Violations[:min(len(r.Violations), textListed)] {
				fmt.Fprintf(b, "    %s\n", blindLine(v, san))
			}
			if extra := len(r.Violations) - textListed; extra > 0 {
				fmt.Fprintf(b, "    … and %d more (all in --json and --markdown)\n", extra)
			}
		}
	}
}

// processMarkdown writes the Markdown of the ADR-0028 checks: the panel table,
// the carried-over dimensions and the blind-relabelling check.
func (d *Document) processMarkdown(b *strings.Builder) {
	esc := format.EscapeMarkdown
	if d.hasPanel() {
		b.WriteString("**Rater panel.** A judge cannot be held to more agreement than the raters reach with one another: " +
			"the panel's Krippendorff's alpha (with the lock's weights, over the cases with two or more labels) beside the judge's weighted kappa " +
			"(against the adjudication, else the panel's median bin).\n\n")
		b.WriteString("| dimension | raters | cases | panel alpha | 95% CI | n | judge weighted kappa | disagreed | adjudicated |\n")
		b.WriteString("|---|---:|---:|---:|---|---:|---:|---:|---:|\n")
		for _, dim := range d.dimensions() {
			p := dim.Panel
			if p == nil {
				continue
			}
			alpha, ci := p.alphaCell()
			_, _, wk, _ := dim.numbers("not valid")
			fmt.Fprintf(b, "| %s | %d | %d | %s | %s | %d | %s | %d | %d |\n", esc(dim.Name), len(p.Raters), p.Cases, alpha, ci, p.N, wk,
				p.Disagreed, len(p.Adjudications))
		}
		b.WriteString("\n")
	}
	switch co := d.CarriedOver; {
	case co != nil:
		if co.OK {
			fmt.Fprintf(b, "**Carried over:** the labels of the carried-over dimensions are those at %s.\n\n", esc(co.Base))
		} else {
			fmt.Fprintf(b, "**Carried over:** ❌ a carried-over dimension's labels changed since %s:\n\n", esc(co.Base))
		}
		for _, name := range d.carriedDims() {
			if cd, ok := co.Dimensions[name]; ok {
				fmt.Fprintf(b, "- %s\n", carriedLine(name, cd, co.Base, esc))
			}
		}
		b.WriteString("\n")
	case len(d.carriedDims()) > 0:
		fmt.Fprintf(b, "**Carried over:** %s not compared with a git ref (run with `--lock-base`).\n\n", esc(strings.Join(d.carriedDims(), ", ")))
	}
	if bl := d.BlindLabels; bl != nil {
		if bl.OK {
			fmt.Fprintf(b, "**Blind labels:** every paired human label was committed before its judge score (%s).\n\n", esc(bl.summary()))
		} else {
			fmt.Fprintf(b, "**Blind labels:** ❌ %s.\n\n", esc(bl.summary()))
		}
		b.WriteString("| rater | labels | not provably blind |\n|---|---:|---:|\n")
		for _, r := range bl.Raters {
			fmt.Fprintf(b, "| %s | %d | %d |\n", esc(raterName(r.Rater)), r.Labels, len(r.Violations))
		}
		b.WriteString("\n")
		for _, r := range bl.Raters {
			if len(r.Violations) == 0 {
				continue
			}
			fmt.Fprintf(b, "<details><summary>Rater %s: %d label(s) not provably blind</summary>\n\n", esc(raterName(r.Rater)), len(r.Violations))
			for _, v := range r.Violations[:min(len(r.Violations), MaxListed)] {
				fmt.Fprintf(b, "- %s\n", blindLine(v, esc))
			}
			more(b, len(r.Violations))
			b.WriteString("\n</details>\n\n")
		}
	}
}

// processRule is the ADR-0028 clause of the Markdown's gate sentence.
func (d *Document) processRule() string {
	s := ""
	if len(d.carriedDims()) > 0 && d.CarriedOver != nil {
		s += ", carried-over labels identical to the base ref's"
	}
	if d.BlindLabels != nil {
		s += ", every paired human label committed before its judge score"
	}
	return s
}

package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/calibrate"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
)

// CalibrationSchema is the schema id of the calibration JSON.
const CalibrationSchema = "retrieval-gate/calibration@1"

// The calibration JSON. Struct fields are declared in alphabetical order of their
// JSON names, so the output has sorted keys at every level.
type calibrationJSON struct {
	Bins           []float64                 `json:"bins"`
	Dimensions     map[string]*dimensionJSON `json:"dimensions"`
	GitAnchoring   *gitAnchoringJSON         `json:"git_anchoring"`
	KappaWeighting string                    `json:"kappa_weighting"`
	Lock           lockJSON                  `json:"lock"`
	MaxUnpaired    *string                   `json:"max_unpaired"`
	MinKappa       float64                   `json:"min_kappa"`
	Schema         string                    `json:"schema"`
	Verdict        string                    `json:"verdict"`
}

type dimensionJSON struct {
	Agreement     *float64          `json:"agreement"`
	CI95          *[2]float64       `json:"ci95"`
	Confusion     [][]int           `json:"confusion"`
	Construct     string            `json:"construct"`
	Constructs    constructsJSON    `json:"constructs"`
	Disagreements disagreementsJSON `json:"disagreements"`
	Gated         bool              `json:"gated"`
	// Invalid holds the numbers of a construct-mismatch dimension, kept apart from
	// the measurement fields (which are null): they compare different constructs.
	Invalid       *invalidJSON    `json:"invalid_measurement,omitempty"`
	Kappa         *float64        `json:"kappa"`
	N             int             `json:"n"`
	Notes         []string        `json:"notes"`
	Status        string          `json:"status"`
	Unpaired      unpairedJSON    `json:"unpaired"`
	Violations    []violationJSON `json:"violations"`
	WeightedKappa *float64        `json:"weighted_kappa"`
}

type constructsJSON struct {
	Human []string `json:"human"`
	Judge []string `json:"judge"`
	Lock  string   `json:"lock"`
}

type disagreementJSON struct {
	CaseID   string `json:"case_id"`
	HumanBin int    `json:"human_bin"`
	JudgeBin int    `json:"judge_bin"`
}

type disagreementsJSON struct {
	HumanAboveJudge []disagreementJSON `json:"human_above_judge"`
	JudgeAboveHuman []disagreementJSON `json:"judge_above_human"`
}

type invalidJSON struct {
	Agreement     *float64    `json:"agreement"`
	CI95          *[2]float64 `json:"ci95"`
	Kappa         *float64    `json:"kappa"`
	WeightedKappa *float64    `json:"weighted_kappa"`
}

// unpairedJSON lists the unpaired labels; with --max-unpaired, a gated
// dimension also has the number allowed and whether it is over that limit.
type unpairedJSON struct {
	Allowed   *int     `json:"allowed"`
	HumanOnly []string `json:"human_only"`
	JudgeOnly []string `json:"judge_only"`
	OverLimit bool     `json:"over_limit"`
}

type violationJSON struct {
	CaseID string `json:"case_id"`
	Reason string `json:"reason"`
}

type lockJSON struct {
	Base    *string  `json:"base"`
	Changed []string `json:"changed"`
	OK      bool     `json:"ok"`
}

type gitAnchoringJSON struct {
	HumanCommit string   `json:"human_commit"`
	JudgeCommit string   `json:"judge_commit"`
	OK          bool     `json:"ok"`
	Reasons     []string `json:"reasons"`
}

func optFloat(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

func optCI(ci [2]float64) *[2]float64 {
	if math.IsNaN(ci[0]) || math.IsNaN(ci[1]) {
		return nil
	}
	return &ci
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func disagreements(ds []calibrate.Disagreement) []disagreementJSON {
	out := make([]disagreementJSON, len(ds))
	for i, d := range ds {
		out[i] = disagreementJSON{d.CaseID, d.HumanBin, d.JudgeBin}
	}
	return out
}

// CalibrationJSON writes the calibration report (schema retrieval-gate/calibration@1):
// sorted keys, two-space indent, undefined numbers as null. Under construct-mismatch
// the measurement fields (agreement, kappa, weighted_kappa, ci95) are null and the
// numbers are kept under invalid_measurement.
func CalibrationJSON(w io.Writer, r *calibrate.Result) error {
	out := calibrationJSON{
		Bins:           nonNil(r.Lock.Bins),
		Dimensions:     map[string]*dimensionJSON{},
		KappaWeighting: r.Lock.KappaWeighting,
		Lock:           lockJSON{Changed: []string{}, OK: true},
		MinKappa:       r.Lock.MinKappa,
		Schema:         CalibrationSchema,
		Verdict:        r.Verdict(),
	}
	if lc := r.LockCheck; lc != nil {
		base := lc.Base
		out.Lock = lockJSON{Base: &base, Changed: nonNil(lc.Changed), OK: len(lc.Changed) == 0}
	}
	if ga := r.GitAnchor; ga != nil {
		out.GitAnchoring = &gitAnchoringJSON{ga.HumanCommit, ga.JudgeCommit, ga.OK, nonNil(ga.Reasons)}
	}
	if r.MaxUnpaired != nil {
		spec := r.MaxUnpaired.Spec
		out.MaxUnpaired = &spec
	}
	for _, d := range r.Dimensions {
		dj := &dimensionJSON{
			Confusion: d.Confusion,
			Construct: d.Construct,
			Constructs: constructsJSON{
				Human: nonNil(d.HumanConstructs), Judge: nonNil(d.JudgeConstructs), Lock: d.Construct,
			},
			Disagreements: disagreementsJSON{
				HumanAboveJudge: disagreements(d.HumanAbove), JudgeAboveHuman: disagreements(d.JudgeAbove),
			},
			Gated:      d.Gated,
			N:          d.N,
			Notes:      nonNil(d.Notes),
			Status:     d.Status,
			Unpaired:   unpairedJSON{HumanOnly: nonNil(d.HumanOnly), JudgeOnly: nonNil(d.JudgeOnly), OverLimit: d.UnpairedOver},
			Violations: []violationJSON{},
		}
		if d.UnpairedAllowed >= 0 {
			allowed := d.UnpairedAllowed
			dj.Unpaired.Allowed = &allowed
		}
		for _, v := range d.Violations {
			dj.Violations = append(dj.Violations, violationJSON{v.CaseID, v.Reason})
		}
		m := &invalidJSON{optFloat(d.Agreement), optCI(d.CI95), optFloat(d.Kappa), optFloat(d.WeightedKappa)}
		if d.Valid {
			dj.Agreement, dj.CI95, dj.Kappa, dj.WeightedKappa = m.Agreement, m.CI95, m.Kappa, m.WeightedKappa
		} else {
			dj.Invalid = m
		}
		out.Dimensions[d.Name] = dj
	}
	return writeIndentedJSON(w, out)
}

// fmtNum renders a statistic with three decimals, or "undefined".
func fmtNum(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "undefined"
	}
	return strconv.FormatFloat(f, 'f', 3, 64)
}

func fmtCI(ci [2]float64) string {
	if math.IsNaN(ci[0]) || math.IsNaN(ci[1]) {
		return "n/a"
	}
	return "[" + fmtNum(ci[0]) + ", " + fmtNum(ci[1]) + "]"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func lockSummary(r *calibrate.Result) string {
	l := r.Lock
	s := make([]string, len(l.Bins))
	for i, b := range l.Bins {
		s[i] = strconv.FormatFloat(b, 'g', -1, 64)
	}
	out := fmt.Sprintf("bins [%s] (%d bins), kappa_weighting %s, min_kappa %s",
		strings.Join(s, ", "), l.NumBins(), l.KappaWeighting, strconv.FormatFloat(l.MinKappa, 'g', -1, 64))
	if r.MaxUnpaired != nil {
		out += ", max_unpaired " + r.MaxUnpaired.Spec + " per gated dimension"
	}
	return out
}

// CalibrationText writes the terminal report: a table of the dimensions, then the
// violations, unpaired labels, lock and git checks, and the verdict.
func CalibrationText(w io.Writer, r *calibrate.Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "calibrate: %s\n", lockSummary(r))
	fmt.Fprintf(&b, "%-20s %-5s %5s %9s %9s %9s  %-18s %s\n", "dimension", "gated", "n", "agreement", "kappa", "w.kappa", "ci95 (w.kappa)", "status")
	for _, d := range r.Dimensions {
		ag, k, wk, ci := fmtNum(d.Agreement), fmtNum(d.Kappa), fmtNum(d.WeightedKappa), fmtCI(d.CI95)
		if !d.Valid {
			ag, k, wk, ci = "invalid", "invalid", "invalid", "n/a"
		}
		fmt.Fprintf(&b, "%-20s %-5s %5d %9s %9s %9s  %-18s %s\n", sanitizeText(d.Name), yesNo(d.Gated), d.N, ag, k, wk, ci, statusCell(d))
	}
	for _, d := range r.Dimensions {
		for _, n := range d.Notes {
			fmt.Fprintf(&b, "  %s: %s\n", sanitizeText(d.Name), sanitizeText(n))
		}
		for _, v := range d.Violations[:min(len(d.Violations), calibrationTextListed)] {
			fmt.Fprintf(&b, "  %s: %s: %s\n", sanitizeText(d.Name), sanitizeText(v.CaseID), sanitizeText(v.Reason))
		}
		if extra := len(d.Violations) - calibrationTextListed; extra > 0 {
			fmt.Fprintf(&b, "  %s: … and %d more violations (all in --json and --markdown)\n", sanitizeText(d.Name), extra)
		}
		if len(d.HumanOnly) > 0 {
			fmt.Fprintf(&b, "  %s: human labels without a judge score: %s\n", sanitizeText(d.Name), textIDs(d.HumanOnly))
		}
		if len(d.JudgeOnly) > 0 {
			fmt.Fprintf(&b, "  %s: judge scores without a human label: %s\n", sanitizeText(d.Name), textIDs(d.JudgeOnly))
		}
		fmt.Fprintf(&b, "  %s: disagreements: judge above human %d, human above judge %d\n", sanitizeText(d.Name), len(d.JudgeAbove), len(d.HumanAbove))
	}
	switch lc := r.LockCheck; {
	case lc == nil:
		b.WriteString("lock: not compared with a git ref (use --lock-base)\n")
	case len(lc.Changed) == 0:
		fmt.Fprintf(&b, "lock: unchanged since %s\n", sanitizeText(lc.Base))
	default:
		fmt.Fprintf(&b, "lock: CHANGED since %s\n", sanitizeText(lc.Base))
		for _, c := range lc.Changed {
			fmt.Fprintf(&b, "  %s\n", sanitizeText(c))
		}
	}
	if ga := r.GitAnchor; ga != nil {
		if ga.OK {
			fmt.Fprintf(&b, "git anchoring: ok (labels %s, judge %s)\n", shortHash(ga.HumanCommit), shortHash(ga.JudgeCommit))
		} else {
			b.WriteString("git anchoring: FAILED\n")
			for _, s := range ga.Reasons {
				fmt.Fprintf(&b, "  %s\n", sanitizeText(s))
			}
		}
	}
	fmt.Fprintf(&b, "verdict: %s", strings.ToUpper(r.Verdict()))
	if len(r.Failed) > 0 {
		fmt.Fprintf(&b, " (%s)", sanitizeText(strings.Join(r.Failed, ", ")))
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// calibrationTextListed caps each case list of the terminal report.
const calibrationTextListed = 20

// textIDs joins at most calibrationTextListed ids for the terminal.
func textIDs(ids []string) string {
	s := sanitizeText(strings.Join(ids[:min(len(ids), calibrationTextListed)], ", "))
	if len(ids) > calibrationTextListed {
		s += fmt.Sprintf(" … and %d more", len(ids)-calibrationTextListed)
	}
	return s
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// CalibrationMarker is the hidden marker the calibration Markdown (and its PR
// comment) starts with, for a comment key ("calibrate" when empty; see Marker).
func CalibrationMarker(key string) string {
	if key == "" {
		key = "calibrate"
	}
	return publish.Marker(key)
}

// CalibrationMarkdown writes the Markdown report, the same text the job summary and
// the PR comment carry. It starts with CalibrationMarker(key). Every case id,
// dimension, construct, file name and ref is escaped.
func CalibrationMarkdown(w io.Writer, r *calibrate.Result, key string) error {
	var b strings.Builder
	b.WriteString(CalibrationMarker(key) + "\n")
	icon := "✅"
	if r.Verdict() != calibrate.StatusPass {
		icon = "❌"
	}
	fmt.Fprintf(&b, "## %s Judge calibration: %s\n\n", icon, strings.ToUpper(r.Verdict()))
	fmt.Fprintf(&b, "Agreement between human labels and the LLM judge, per dimension, on the lock's frozen constants: %s. "+
		"The gate needs weighted kappa ≥ min\\_kappa on every gated dimension, no construct mismatch, no anchoring violation%s, and an unchanged lock.\n\n",
		EscapeMarkdown(lockSummary(r)), unpairedRule(r))
	b.WriteString("| dimension | gated | n | agreement | kappa | weighted kappa | 95% CI | status |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---|---|\n")
	for _, d := range r.Dimensions {
		ag, k, wk, ci := fmtNum(d.Agreement), fmtNum(d.Kappa), fmtNum(d.WeightedKappa), fmtCI(d.CI95)
		if !d.Valid {
			ag, k, wk, ci = "not valid", "not valid", "not valid", "n/a"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s |\n",
			EscapeMarkdown(d.Name), yesNo(d.Gated), d.N, ag, k, wk, ci, EscapeMarkdown(statusCell(d)))
	}
	b.WriteString("\n")
	switch lc := r.LockCheck; {
	case lc == nil:
		b.WriteString("**Lock:** not compared with a git ref (run with `--lock-base`).\n\n")
	case len(lc.Changed) == 0:
		fmt.Fprintf(&b, "**Lock:** unchanged since %s.\n\n", EscapeMarkdown(lc.Base))
	default:
		fmt.Fprintf(&b, "**Lock:** ❌ the frozen constants changed since %s; a calibration is only comparable under the same constants:\n\n", EscapeMarkdown(lc.Base))
		for _, c := range lc.Changed {
			fmt.Fprintf(&b, "- %s\n", EscapeMarkdown(c))
		}
		b.WriteString("\n")
	}
	if ga := r.GitAnchor; ga != nil {
		if ga.OK {
			fmt.Fprintf(&b, "**Git anchoring:** the labels' last commit %s is an ancestor of the judge scores' last commit %s.\n\n",
				EscapeMarkdown(shortHash(ga.HumanCommit)), EscapeMarkdown(shortHash(ga.JudgeCommit)))
		} else {
			b.WriteString("**Git anchoring:** ❌\n\n")
			for _, s := range ga.Reasons {
				fmt.Fprintf(&b, "- %s\n", EscapeMarkdown(s))
			}
			b.WriteString("\n")
		}
	}
	for _, d := range r.Dimensions {
		fmt.Fprintf(&b, "### %s\n\n", EscapeMarkdown(d.Name))
		fmt.Fprintf(&b, "Construct (lock): %s. Human labels declare %s; judge scores declare %s.\n\n",
			EscapeMarkdown(d.Construct), calList(d.HumanConstructs), calList(d.JudgeConstructs))
		switch d.Status {
		case calibrate.StatusConstructMismatch:
			b.WriteString("> **Construct mismatch.** The human labels and the judge scores do not both measure the lock's construct, " +
				"so they measure different things: their agreement is not a valid measurement and is not reported as one " +
				"(the JSON keeps the numbers under `invalid_measurement`).\n\n")
		case calibrate.StatusAnchoringViolation:
			b.WriteString("> **Anchoring violation.** Some human labels are not older than the judge score they are paired with, " +
				"so the labellers may have seen the judge's answer; agreement on them is not independent evidence.\n\n")
		}
		for _, n := range d.Notes {
			fmt.Fprintf(&b, "- %s\n", EscapeMarkdown(n))
		}
		if len(d.Notes) > 0 {
			b.WriteString("\n")
		}
		if d.N > 0 {
			b.WriteString("Confusion matrix (rows: human bin, columns: judge bin):\n\n|  |")
			for j := range d.Confusion {
				fmt.Fprintf(&b, " judge %d |", j)
			}
			b.WriteString("\n|---|")
			for range d.Confusion {
				b.WriteString("---:|")
			}
			b.WriteString("\n")
			for h, row := range d.Confusion {
				fmt.Fprintf(&b, "| **human %d** |", h)
				for _, c := range row {
					fmt.Fprintf(&b, " %d |", c)
				}
				b.WriteString("\n")
			}
			b.WriteString("\n")
		}
		writeCases := func(title string, ds []calibrate.Disagreement) {
			if len(ds) == 0 {
				fmt.Fprintf(&b, "%s: none.\n\n", title)
				return
			}
			fmt.Fprintf(&b, "<details><summary>%s: %d</summary>\n\n", title, len(ds))
			for _, x := range ds[:min(len(ds), CalibrationMaxListed)] {
				fmt.Fprintf(&b, "- case %s: human bin %d, judge bin %d\n", EscapeMarkdown(x.CaseID), x.HumanBin, x.JudgeBin)
			}
			calMore(&b, len(ds))
			b.WriteString("\n</details>\n\n")
		}
		writeCases("Judge above human", d.JudgeAbove)
		writeCases("Human above judge", d.HumanAbove)
		if len(d.Violations) > 0 {
			fmt.Fprintf(&b, "<details open><summary>Violations: %d</summary>\n\n", len(d.Violations))
			for _, v := range d.Violations[:min(len(d.Violations), CalibrationMaxListed)] {
				fmt.Fprintf(&b, "- case %s: %s\n", EscapeMarkdown(v.CaseID), EscapeMarkdown(v.Reason))
			}
			calMore(&b, len(d.Violations))
			b.WriteString("\n</details>\n\n")
		}
		if len(d.HumanOnly)+len(d.JudgeOnly) > 0 {
			fmt.Fprintf(&b, "<details><summary>Unpaired: %d human label(s) without a judge score, %d judge score(s) without a human label</summary>\n\n",
				len(d.HumanOnly), len(d.JudgeOnly))
			for _, id := range d.HumanOnly[:min(len(d.HumanOnly), CalibrationMaxListed)] {
				fmt.Fprintf(&b, "- case %s: human only\n", EscapeMarkdown(id))
			}
			calMore(&b, len(d.HumanOnly))
			for _, id := range d.JudgeOnly[:min(len(d.JudgeOnly), CalibrationMaxListed)] {
				fmt.Fprintf(&b, "- case %s: judge only\n", EscapeMarkdown(id))
			}
			calMore(&b, len(d.JudgeOnly))
			b.WriteString("\n</details>\n\n")
		}
	}
	if len(r.Failed) > 0 {
		fmt.Fprintf(&b, "**Failed:** %s\n", EscapeMarkdown(strings.Join(r.Failed, ", ")))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// statusCell is a dimension's status for the tables, with the --max-unpaired
// failure beside it (the status itself reports the kappa).
func statusCell(d *calibrate.Dimension) string {
	if d.UnpairedOver {
		return d.Status + ", too many unpaired"
	}
	return d.Status
}

// unpairedRule is the --max-unpaired clause of the Markdown's gate sentence.
func unpairedRule(r *calibrate.Result) string {
	if r.MaxUnpaired == nil {
		return ""
	}
	return ", at most " + EscapeMarkdown(r.MaxUnpaired.Spec) + " unpaired labels in a gated dimension"
}

// CalibrationMaxListed caps each case list of the calibration Markdown (a PR
// comment has a size limit); the JSON lists every case.
const CalibrationMaxListed = 50

func calMore(b *strings.Builder, total int) {
	if total > CalibrationMaxListed {
		fmt.Fprintf(b, "- … and %d more (every case is in the JSON report)\n", total-CalibrationMaxListed)
	}
}

func calList(ss []string) string {
	if len(ss) == 0 {
		return "nothing (no labels)"
	}
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = EscapeMarkdown(s)
	}
	return strings.Join(q, ", ")
}

package gate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/check"
	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	igate "github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/guard"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/report/checkreport"
	htmlreport "github.com/retrieval-gate/retrieval-gate/internal/report/html"
)

// Options are the settings of Check, each the counterpart of a flag of
// `retrieval-gate check`. The zero value is the command's defaults.
type Options struct {
	// K is the retrieval top-k (--k); 0 means the k the cases record (their
	// first case's "retrieval": {"k": N}, written by retrieve and Live), else 5,
	// as check resolves it without --k (the one function both call).
	K int
	// Floors are floor gates, one MEASURE[@GROUP]=F expression each (--floor),
	// e.g. "retrieval_hit_at_k=0.7" or "retrieval_recall_at_k@locale:en=0.6".
	Floors []string
	// AllowEmpty passes a run that scored no gold-carrying case (--allow-empty).
	AllowEmpty bool
	// ReferenceLocale is the locale the deltas are taken against
	// (--reference-locale); "" means "en". It is a BCP 47 tag, well-formed
	// by RFC 5646's syntax (else Check, Live and LiveOptions.Resolve refuse
	// it, as check refuses the flag), put in the case the cases' locales
	// are grouped in ("pt_br" is "pt-BR"). A tag no case carries is no
	// error: the reports then say the reference locale has no
	// gold-carrying cases and show no deltas.
	ReferenceLocale string
	// ParentFromID derives a retrieved entry's card from its id: the part before
	// the last separator (--parent-from-id); "" is off.
	ParentFromID string
}

// KB is a loaded knowledge base.
type KB struct{ kb *kbfile.KB }

// LoadKB reads a knowledge base: a JSON Lines file of cards or a directory of
// Markdown cards (docs/formats.md, section "Cases", its last paragraph), as
// `check --kb` and `retrieve --kb` read it. A malformed card is an error
// naming file:line. An entry of a directory named *.md that is not read (a
// named pipe, a device, a socket, a symbolic link out of the directory or to
// no regular file) is no error, as it is none for the commands: it is in
// [KB.Skipped], which the commands print as warnings, and in the
// [Report.Warnings] of a check against the knowledge base.
func LoadKB(ctx context.Context, path string) (*KB, error) {
	if path == "" {
		return nil, errors.New("gate: no knowledge base path (empty)")
	}
	kb, err := kbfile.Load(ctx, path)
	if err != nil {
		return nil, guard.Error(err)
	}
	return &KB{kb: kb}, nil
}

// Skipped lists the entries of a knowledge-base directory named *.md that
// LoadKB did not read, each with the reason, in path order
// ("kb/a.md: not a regular file (named pipe)"): what `check --kb` and
// `retrieve --kb` print on standard error as "retrieval-gate: warning:
// knowledge base: skipped kb/a.md: ...". It is empty when every one was read.
// Other files (without the .md extension, or hidden: their name, or a
// directory's on their path, starts with a dot) are not cards, and neither the
// commands nor Skipped name them. The entries are guarded as the errors are (a
// file name cannot forge a workflow command in a CI log).
func (kb *KB) Skipped() []string {
	if kb == nil || kb.kb == nil {
		return nil
	}
	out := make([]string, len(kb.kb.Skipped))
	for i, s := range kb.kb.Skipped {
		out[i] = guard.Text(s)
	}
	return out
}

// Check scores the cases read from cases against kb and decides the gates, as
// `retrieval-gate check --cases FILE --kb KB` does. The cases' file name in
// messages and in the report is the reader's Name() when it has one (an
// *os.File), else "stdin". A failing gate is not an error: it is the Report's
// verdict. An error is bad input (a message naming file:line), a bad option, a
// nil reader or knowledge base, or ctx's error (returned promptly, also while
// cases blocks in a read).
func Check(ctx context.Context, cases io.Reader, kb *KB, o Options) (*Report, error) {
	rep, err := checkCases(ctx, cases, kb, o)
	return rep, guard.Error(err)
}

// checkCases is Check but for the guard on its error's text.
func checkCases(ctx context.Context, cases io.Reader, kb *KB, o Options) (*Report, error) {
	if kb == nil || kb.kb == nil {
		return nil, errors.New("gate: no knowledge base")
	}
	if input.IsNil(cases) {
		return nil, errors.New("gate: no cases reader (nil)")
	}
	opts, err := o.internal()
	if err != nil {
		return nil, err
	}
	// The k, resolved as check resolves it: Options.K, else the k the cases
	// record, else 5.
	in := check.In{Cases: cases, CasesName: readerName(cases), KB: kb.kb}
	kc, err := check.ResolveK(ctx, &in, o.K)
	if err != nil {
		return nil, err
	}
	opts.K = kc.K
	res, err := check.Run(ctx, in, opts)
	if err != nil {
		return nil, err
	}
	rep := newReport(res.Gate)
	rep.run.warnings = checkWarnings(kb.kb, kc, rep.run.doc)
	return rep, nil
}

// checkWarnings are the warnings `check` prints on standard error for a run
// against kb at the k of kc with the document doc, in its order, each as the
// command words it after "retrieval-gate: warning: " (the k set by
// Options.K named so rather than by --k), guarded as the command's standard
// error is.
func checkWarnings(kb *kbfile.KB, kc check.KChoice, doc *checkreport.Document) []string {
	var out []string
	for _, s := range kb.Skipped {
		out = append(out, "knowledge base: skipped "+s)
	}
	if w := checkreport.KChoiceWarning(kc.K, kc.From, kc.RunK, kc.RunKFile, kc.RunKLine); w != "" {
		if kc.From == check.KFromFlag {
			w = strings.Replace(w, "--k ", "Options.K = ", 1)
		}
		out = append(out, format.SanitizeText(w))
	}
	if w := doc.UnknownKeysWarning(); w != "" {
		out = append(out, format.SanitizeText(w))
	}
	for i, w := range out {
		out[i] = guard.Text(w)
	}
	return out
}

// internal validates o and maps it to check.Options, but for the k, which
// check.ResolveK gives.
func (o Options) internal() (check.Options, error) {
	co := check.Options{ReferenceLocale: o.ReferenceLocale, AllowEmpty: o.AllowEmpty, ParentSep: o.ParentFromID}
	if o.K < 0 {
		return co, fmt.Errorf("gate: Options.K must be at least 1, or 0 for the k the cases record, got %d", o.K)
	}
	if co.ReferenceLocale == "" {
		co.ReferenceLocale = "en"
	} else {
		loc, err := igate.ParseLocale(co.ReferenceLocale) // check's --reference-locale's
		if err != nil {
			return co, fmt.Errorf("gate: Options.ReferenceLocale: %w", err)
		}
		co.ReferenceLocale = loc
	}
	for _, e := range o.Floors {
		s, err := check.FloorGrammar.Parse(e)
		if err == nil {
			err = co.Floors.Add(s)
		}
		if err != nil {
			return co, fmt.Errorf("gate: floor: %w", err)
		}
	}
	return co, nil
}

// Verdict is a check's decision: every gate passed (or is off), or one failed.
type Verdict string

// The verdicts, as the JSON document's "verdict" and `check`'s exit code (0
// and 1) give them.
const (
	VerdictPass Verdict = "pass"
	VerdictFail Verdict = "fail"
)

// Status is one gate's outcome.
type Status string

// The statuses of a gate, as the JSON document's "status" writes them.
const (
	StatusPass Status = "pass"
	StatusFail Status = "fail"
	StatusOff  Status = "off" // not configured, or nothing to decide on
)

// Report is the outcome of a check: the verdict, the gates, the groups, and
// the command's reports. CommentKey is the key the Markdown's comment marker
// carries, which `check --comment-key` sets ("" the default key).
//
// A Report is made by Check and Live. The zero Report (and a nil *Report)
// holds no run: it has no verdict (Verdict is "", Passed false: a gate that did
// not run does not pass), no gates, groups or warnings, and each Write method
// returns an error, writing nothing.
type Report struct {
	CommentKey string

	run *checkRun // behind a pointer: a Report stays comparable
}

// checkRun is what a Report holds of its run.
type checkRun struct {
	res      *igate.Result
	doc      *checkreport.Document
	warnings []string
}

func newReport(r *igate.Result) *Report {
	return &Report{run: &checkRun{res: r, doc: checkreport.New(r)}}
}

// errZeroReport is the error of a zero Report's Write methods.
var errZeroReport = errors.New("gate: a zero Report holds no result: Check and Live return the Report of a run")

// zero reports whether r holds no run (the zero Report, or nil).
func (r *Report) zero() bool { return r == nil || r.run == nil }

// Passed reports whether every gate passed (or is off): the verdict is
// VerdictPass. A zero Report has not passed.
func (r *Report) Passed() bool { return !r.zero() && len(r.run.res.Failed()) == 0 }

// Verdict is VerdictPass or VerdictFail ("" for a zero Report).
func (r *Report) Verdict() Verdict {
	if r.zero() {
		return ""
	}
	return Verdict(r.run.res.Verdict())
}

// Warnings are the warnings `check` prints on standard error for the same
// knowledge base, cases and options, in its order, each without the
// command's "retrieval-gate: warning: " prefix: the entries of the knowledge
// base that were not read ([KB.Skipped], each "knowledge base: skipped
// kb/a.md: ..."), a k other than the one the cases record ("Options.K = 3
// differs from the run's k (...)"; check says --k), and the cases' top-level
// keys the cases format does not know. A warning changes no gate; empty when
// there is none. Each is guarded as the errors are.
func (r *Report) Warnings() []string {
	if r.zero() {
		return nil
	}
	return slices.Clone(r.run.warnings)
}

// Gate is one gate's outcome, as the reports list it.
type Gate struct {
	Name    string // e.g. integrity, non_empty, floor:retrieval_hit_at_k@overall
	Group   string // "overall", "type:NAME", "locale:TAG"; "" for a gate on no group
	Measure string // the measure's key; "" for a gate on no measure
	Status  Status
	// Threshold and Value are the floor and the observed value of a gate on a
	// measure (Threshold is NaN when the gate is off, Value NaN when there was
	// nothing to observe); both NaN for a gate on no measure.
	Threshold, Value float64
	N                int64  // the cases (or ids) the gate looked at
	Reason           string // why, when the status needs one
}

// Gates are the gates in the reports' order.
func (r *Report) Gates() []Gate {
	if r.zero() {
		return nil
	}
	out := make([]Gate, len(r.run.doc.Gates))
	for i, g := range r.run.doc.Gates {
		out[i] = Gate{Name: g.Name, Group: g.Group, Measure: g.Measure, Status: Status(g.Status), N: g.N, Reason: g.Reason,
			Threshold: math.NaN(), Value: math.NaN()}
		if g.Threshold != nil {
			out[i].Threshold = float64(*g.Threshold)
		}
		if g.Value != nil {
			out[i].Value = float64(*g.Value)
		}
	}
	return out
}

// Group is the aggregate of a set of cases: overall, one type or one locale.
type Group struct {
	Name     string // "overall", "type:NAME" or "locale:TAG"
	N        int64  // its gold-carrying (scored) cases
	Measures []Measure
}

// Measure is one measure's mean over a group, with its 95% interval.
type Measure struct {
	Key       string // e.g. retrieval_hit_at_k
	Mean      float64
	Low, High float64 // the 95% confidence interval
	Method    string  // how the interval was computed: wilson-cc, bca, ...
	N         int64
}

// Groups are overall, then the type groups, then the locale groups (each by name).
func (r *Report) Groups() []Group {
	if r.zero() {
		return nil
	}
	out := []Group{group("", r.run.res.Overall)}
	for _, g := range r.run.res.ByType {
		out = append(out, group(floor.TypePrefix, g))
	}
	for _, g := range r.run.res.ByLocale {
		out = append(out, group(floor.LocalePrefix, g))
	}
	return out
}

func group(prefix string, g igate.Group) Group {
	out := Group{Name: prefix + g.Name, N: g.N, Measures: make([]Measure, len(g.Metrics))}
	for i, m := range g.Metrics {
		out.Measures[i] = Measure{Key: m.Key, Mean: m.Mean, Low: m.CI95[0], High: m.CI95[1], Method: m.Method, N: m.N}
	}
	return out
}

// WriteJSON writes the report as `check --json` does, byte for byte (the
// document retrieval-gate/aggregates@1, docs/check.md, section "Reports").
func (r *Report) WriteJSON(w io.Writer) error {
	if r.zero() {
		return errZeroReport
	}
	return r.run.doc.WriteJSON(w)
}

// WriteMarkdown writes the report as `check --markdown` does: the body of the
// PR comment, its marker carrying CommentKey.
func (r *Report) WriteMarkdown(w io.Writer) error {
	if r.zero() {
		return errZeroReport
	}
	_, err := io.WriteString(w, r.run.doc.Markdown(checkreport.MarkdownOptions{Marker: format.CommentMarker(r.CommentKey)}))
	return err
}

// WriteText writes the terminal report `check` prints: the verdict line, the
// counts and groups, what failed, and a last line counting what
// [Report.WriteTextVerbose] adds.
//
// Like the command's standard output, it is written through a guard: text of
// the cases (a locale, a query, an id) that holds a workflow command ("::" at
// a line start, "##[" anywhere) cannot forge one in the CI log a test prints
// the report to ("##[add-mask]" is written "##\[add-mask]").
func (r *Report) WriteText(w io.Writer) error {
	if r.zero() {
		return errZeroReport
	}
	return guard.Write(w, r.run.doc.Text)
}

// WriteTextVerbose writes the whole terminal report `check --verbose` prints:
// also the locale deltas, the gate table of a pass, the stale-index warning
// and the missed cases.
// It is guarded as WriteText is.
func (r *Report) WriteTextVerbose(w io.Writer) error {
	if r.zero() {
		return errZeroReport
	}
	return guard.Write(w, r.run.doc.TextVerbose)
}

// WriteHTML writes the self-contained HTML page of `check --html`.
func (r *Report) WriteHTML(w io.Writer) error {
	if r.zero() {
		return errZeroReport
	}
	return htmlreport.CheckHTML(w, r.run.doc)
}

// Package trend is the small trend of the gated measures that check's and
// compare's Markdown report (the PR comment, the job summary) shows: the last N
// runs of the same command on the base branch, read from a history before this
// run is appended, one row per measure (a sparkline, the oldest and newest base
// values with their n, this run's value), with the runs whose input
// fingerprint changed marked, so a jump from relabelling is not read as a
// retrieval change.
//
// The history is any scan over records (Source): a --history file, or a
// history.jsonl read from a branch. Selection and the sparkline's scaling are
// pure functions (Build, Levels); the renderers only print a Trend.
//
// A row never joins runs at different cutoffs: hit@5 and hit@2 are two
// measures, so a row holds only the base runs at this run's k (the k its label
// names) and counts the others, by their k, as left out. The history page and
// the dashboard's chart over the runs never join them either: a series per k
// (html.HistoryView).
package trend

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"slices"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// DefaultRuns is the default number of base runs a trend shows; MaxRuns the
// most (a longer sparkline no longer fits GitHub's comment column).
const (
	DefaultRuns = 10
	MaxRuns     = 30
)

// Glyphs are the sparkline's eight levels, lowest first.
var Glyphs = []rune("▁▂▃▄▅▆▇█")

// ChangeMark separates two sparkline glyphs when the inputs changed between
// those runs.
const ChangeMark = "¦"

// Measure is one trended value: the mean of the measure Key over Group
// (outcome.GroupOverall, "type:NAME" or "locale:TAG" in a check document,
// "strategy:NAME" in a compare document).
type Measure struct {
	Group, Key string
}

// Source scans a history's records in file order, as history.Scan does: a file
// (history.Scan), or a history.jsonl read from anywhere else
// (history.ScanReader). The document is valid until fn returns.
type Source func(fn func(rec history.Record, doc *fastjson.Value) error) error

// Value is a measure's mean and its n in one run, and for DCG@k the largest
// value possible in that run (MaxDCG: NaN when the record does not tell it; 0
// for every other measure, which has no such scale to state). K is the run's
// cutoff, the document's k (0 when it states none): the history's runs may be
// at different k (the fingerprint's --k), and a value is only the row's
// measure (hit@5) at its own k, so a row keeps the values at its k (Build).
type Value struct {
	Mean float64
	N    int64
	Max  float64
	K    int
}

// MaxDCG is the largest DCG@k possible in the run of a compare document: its
// max_dcg_at_k, else (a document written before that field) derived from its k,
// gain and the highest level of its relevance_scale as compare computes it
// (metrics.MaxDCG); NaN when the document tells neither (no relevance scale).
func MaxDCG(doc *fastjson.Value) float64 {
	if doc == nil {
		return math.NaN()
	}
	if m := doc.Get("max_dcg_at_k"); m != nil && m.Type() == fastjson.TypeNumber {
		if v := m.GetFloat64(); v > 0 && !math.IsInf(v, 0) {
			return v
		}
	}
	k, top := doc.GetInt("k"), doc.Get("relevance_scale", "1")
	gain := string(doc.GetStringBytes("gain"))
	if k < 1 || top == nil || top.Type() != fastjson.TypeNumber || (gain != "exp" && gain != "linear") {
		return math.NaN()
	}
	level, err := top.Int()
	if err != nil || level > 127 || k > 100000 {
		return math.NaN()
	}
	g := metrics.GainExp
	if gain == "linear" {
		g = metrics.GainLinear
	}
	return metrics.MaxDCG(k, max(level, 1), g)
}

// Run is one run as the trend needs it: the record's provenance, its
// fingerprint, its cutoff K (its document's k, 0 when it states none) and
// the values of the trended measures it has (a measure its document lacks is
// absent).
type Run struct {
	Commit, Time string
	Fingerprint  history.Fingerprint
	K            int
	Values       map[Measure]Value
}

// LeftOut is how many of a row's base runs were at cutoff K (0: their
// document states none) when the row is at another.
type LeftOut struct {
	K, Runs int
}

// Point is one run's value in a row.
type Point struct {
	Value
	Commit, Time string
	// Changed lists what differs in the inputs from the row's previous point
	// (history.Fingerprint.Changed; nil for the first point or when nothing did).
	Changed []string
}

// Row is the trend of one measure.
type Row struct {
	Measure
	// K is the cutoff of the row: this run's (Run.K), the k its label names.
	K       int
	Points  []Point // base runs with the measure at K, oldest first
	Current *Point  // this run; nil when its document lacks the measure
	// LeftOut are the base runs with the measure at another cutoff, by k
	// (ascending): a measure at another k is another measure, so they are
	// not joined to the row's (nil when there is none).
	LeftOut []LeftOut
	// Spark is one glyph per point, ChangeMark before a point whose inputs
	// changed; CurrentGlyph is this run's glyph (and CurrentChanged whether its
	// inputs differ from the newest point's), on the same scale. Both "" when
	// there is nothing to draw.
	Spark, CurrentGlyph string
	CurrentChanged      bool
}

// Change is a run whose inputs differ from the base run before it.
type Change struct {
	Commit, Time string
	Current      bool     // this run, against the newest base run
	What         []string // history.Fingerprint.Changed
}

// Trend is what the reports show.
type Trend struct {
	Command, Branch string
	Limit           int      // the N asked for
	Runs            int      // base runs found (at most Limit)
	Rows            []Row    // in the order of the measures asked for
	Changes         []Change // input changes between the shown runs (those at this run's k), oldest first
}

// Options select the runs: those of Command whose branch is Branch, the
// newest Limit of them.
type Options struct {
	Command, Branch string
	Limit           int
	Measures        []Measure
}

// Extract reads the measures' values from a run's JSON document (check's
// retrieval-gate/aggregates@1 or compare's retrieval-gate/compare@1); a
// measure the document lacks, or whose mean is null, is absent.
func Extract(doc *fastjson.Value, ms []Measure) map[Measure]Value {
	out := make(map[Measure]Value, len(ms))
	for _, m := range ms {
		var g *fastjson.Value
		kind, name, _ := strings.Cut(m.Group, ":")
		switch {
		case m.Group == outcome.GroupOverall:
			g = doc.Get("overall")
		case kind == "type":
			g = doc.Get("by_type", name)
		case kind == "locale":
			g = doc.Get("by_locale", name)
		case kind == "strategy":
			g = doc.Get("strategies", name)
		}
		if g == nil {
			continue
		}
		s := g.Get("metrics", m.Key)
		if s == nil || s.Type() != fastjson.TypeObject {
			continue
		}
		mean := s.Get("mean")
		if mean == nil || mean.Type() != fastjson.TypeNumber {
			continue
		}
		v, n := mean.GetFloat64(), s.GetInt64("n")
		if math.IsNaN(v) || math.IsInf(v, 0) || n < 0 {
			continue
		}
		val := Value{Mean: v, N: n, K: cutoff(doc)}
		if m.Key == metrics.KeyDCG && kind == "strategy" {
			val.Max = MaxDCG(doc)
		}
		out[m] = val
	}
	return out
}

// cutoff is a run's k: its document's, 0 when it states none.
func cutoff(doc *fastjson.Value) int {
	if doc == nil {
		return 0
	}
	return max(doc.GetInt("k"), 0)
}

// Collect scans src and keeps the newest o.Limit runs of o.Command on
// o.Branch (a ring of that many runs: memory does not grow with the history),
// then builds the trend against this run (its document and fingerprint).
func Collect(src Source, current *fastjson.Value, fp history.Fingerprint, o Options) (*Trend, error) {
	limit := max(o.Limit, 0)
	ring := make([]Run, 0, limit)
	next := 0
	err := src(func(rec history.Record, doc *fastjson.Value) error {
		if limit == 0 || rec.Command != o.Command || rec.Branch != o.Branch || doc == nil {
			return nil
		}
		r := Run{Commit: rec.Commit, Time: rec.Time, Fingerprint: rec.Fingerprint, K: cutoff(doc), Values: Extract(doc, o.Measures)}
		if len(ring) < limit {
			ring = append(ring, r)
			return nil
		}
		ring[next] = r
		next = (next + 1) % limit
		return nil
	})
	if err != nil {
		return nil, err
	}
	runs := append(ring[next:len(ring):len(ring)], ring[:next]...)
	cur := Run{Fingerprint: fp, K: cutoff(current), Values: Extract(current, o.Measures)}
	t := Build(runs, cur, o.Measures)
	t.Command, t.Branch, t.Limit = o.Command, o.Branch, o.Limit
	return t, nil
}

// Build is the trend of the measures over runs (oldest first) and this run:
// per measure the runs that have it at this run's cutoff (current.K; those at
// another are counted in LeftOut, never joined to them), the input changes
// between consecutive ones, and the sparkline scaled to the row's lowest and
// highest value (this run's included). Changes are those between the
// consecutive runs at this run's cutoff, and from the newest of them to this
// run.
func Build(runs []Run, current Run, ms []Measure) *Trend {
	t := &Trend{Runs: len(runs)}
	// The input changes between the runs the rows join: those at this run's k.
	var prevRun *Run
	for i := range runs {
		if runs[i].K != current.K {
			continue
		}
		if prevRun != nil {
			if what := changed(runs[i].Fingerprint, prevRun.Fingerprint); what != nil {
				t.Changes = append(t.Changes, Change{Commit: runs[i].Commit, Time: runs[i].Time, What: what})
			}
		}
		prevRun = &runs[i]
	}
	if prevRun != nil {
		if what := changed(current.Fingerprint, prevRun.Fingerprint); what != nil {
			t.Changes = append(t.Changes, Change{Current: true, What: what})
		}
	}
	for _, m := range ms {
		row := Row{Measure: m, K: current.K}
		var prev *history.Fingerprint
		for i := range runs {
			v, ok := runs[i].Values[m]
			if !ok {
				continue
			}
			if v.K != row.K {
				row.LeftOut = leaveOut(row.LeftOut, v.K)
				continue
			}
			p := Point{Value: v, Commit: runs[i].Commit, Time: runs[i].Time}
			if prev != nil {
				p.Changed = changed(runs[i].Fingerprint, *prev)
			}
			prev = &runs[i].Fingerprint
			row.Points = append(row.Points, p)
		}
		vals := make([]float64, 0, len(row.Points)+1)
		for _, p := range row.Points {
			vals = append(vals, p.Mean)
		}
		if v, ok := current.Values[m]; ok {
			row.Current = &Point{Value: v}
			if prev != nil {
				row.Current.Changed = changed(current.Fingerprint, *prev)
			}
			vals = append(vals, v.Mean)
		}
		levels := Levels(vals)
		var spark strings.Builder
		for i, p := range row.Points {
			if p.Changed != nil {
				spark.WriteString(ChangeMark)
			}
			spark.WriteRune(Glyphs[levels[i]])
		}
		row.Spark = spark.String()
		if row.Current != nil {
			row.CurrentGlyph = string(Glyphs[levels[len(levels)-1]])
			row.CurrentChanged = row.Current.Changed != nil && len(row.Points) > 0
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// leaveOut counts one more run at cutoff k in lo, kept in ascending k.
func leaveOut(lo []LeftOut, k int) []LeftOut {
	i := 0
	for i < len(lo) && lo[i].K < k {
		i++
	}
	if i < len(lo) && lo[i].K == k {
		lo[i].Runs++
		return lo
	}
	return slices.Insert(lo, i, LeftOut{K: k, Runs: 1})
}

// changed is what differs between two fingerprints, nil when they are equal;
// "fingerprint" when only the digest does (a record written by another version).
func changed(fp, prev history.Fingerprint) []string {
	if fp.Digest == prev.Digest {
		return nil
	}
	what := fp.Changed(prev)
	if len(what) == 0 {
		what = []string{"fingerprint"}
	}
	return what
}

// Levels scales values to the sparkline's levels 0..len(Glyphs)-1: the lowest
// value is 0, the highest the top level, linearly between them (rounded to the
// nearest level); when all values are equal, every one is the middle level 3.
func Levels(vals []float64) []int {
	out := make([]int, len(vals))
	if len(vals) == 0 {
		return out
	}
	lo, hi := vals[0], vals[0]
	for _, v := range vals[1:] {
		lo, hi = min(lo, v), max(hi, v)
	}
	top := float64(len(Glyphs) - 1)
	// Halves: hi - lo overflows to +Inf for values near ±MaxFloat64 (a hostile
	// history), hi/2 - lo/2 does not.
	span := hi/2 - lo/2
	for i, v := range vals {
		l := 3.0
		if span > 0 && !math.IsInf(span, 0) {
			l = math.Round((v/2 - lo/2) / span * top)
		}
		out[i] = int(min(max(l, 0), top))
	}
	return out
}

// FileSource is the Source of a history file or directory (history.File),
// read until ctx ends; a history that does not exist yet has no runs.
func FileSource(ctx context.Context, path string) Source {
	return func(fn func(history.Record, *fastjson.Value) error) error {
		err := history.Scan(ctx, path, fn)
		if isNotExist(err) {
			return nil
		}
		return err
	}
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

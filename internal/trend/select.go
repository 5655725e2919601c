package trend

import (
	"context"
	"io"
	"math"
	"slices"

	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// Gate is what the selection needs of a gate of a run's gate table: its group,
// its measure and its threshold (NaN: a gate left off, or one without a
// threshold).
type Gate struct {
	Group, Measure string
	Threshold      float64
}

// Gated is the measures a gate is set on (floors, regression gates: a
// threshold), each measure of a group once, in gate order.
func Gated(gates []Gate) []Measure {
	var out []Measure
	for _, g := range gates {
		m := Measure{Group: g.Group, Key: g.Measure}
		if g.Measure == "" || g.Group == "" || math.IsNaN(g.Threshold) || slices.Contains(out, m) {
			continue
		}
		out = append(out, m)
	}
	return out
}

// CheckMeasures are the measures check's trend shows: the gated ones, else
// every registered measure of check overall (hit@k, recall@k, nDCG@k).
func CheckMeasures(gates []Gate) []Measure {
	if ms := Gated(gates); len(ms) > 0 {
		return ms
	}
	out := make([]Measure, 0, len(metrics.CaseKeys))
	for _, key := range metrics.CaseKeys {
		out = append(out, Measure{Group: outcome.GroupOverall, Key: key})
	}
	return out
}

// CompareMeasures are the measures compare's trend shows: the gated ones, else
// the primary measure of the recommended strategy (recommended "": with no
// clear winner, of the best one on the recommendation test, else of the first
// strategy in order).
func CompareMeasures(gates []Gate, recommended, best string, order []string, primary string) []Measure {
	if ms := Gated(gates); len(ms) > 0 {
		return ms
	}
	s := recommended
	if s == "" {
		switch {
		case best != "":
			s = best
		case len(order) > 0:
			s = order[0]
		default:
			return nil
		}
	}
	return []Measure{{Group: outcome.StrategyGroup(s), Key: primary}}
}

// Observe is src with fn called first on each record of branch (a view of the
// runs over time alongside the trend, in the same one pass).
func Observe(src Source, branch string, fn func(history.Record, *fastjson.Value) error) Source {
	return func(next func(history.Record, *fastjson.Value) error) error {
		return src(func(rec history.Record, doc *fastjson.Value) error {
			if rec.Branch == branch {
				if err := fn(rec, doc); err != nil {
					return err
				}
			}
			return next(rec, doc)
		})
	}
}

// Read is one pass over src: the trend when o asks for one (a Limit and
// measures), else nil after scanning every record (for the observers of src).
func Read(src Source, current *fastjson.Value, fp history.Fingerprint, o Options) (*Trend, error) {
	if o.Limit > 0 && len(o.Measures) > 0 {
		return Collect(src, current, fp, o)
	}
	return nil, src(func(history.Record, *fastjson.Value) error { return nil })
}

// ReaderSource is the Source of a history read from r (a history branch's
// file), named file in errors, read until ctx ends; a nil r is a history
// with no runs yet.
func ReaderSource(ctx context.Context, file string, r io.Reader) Source {
	return func(fn func(history.Record, *fastjson.Value) error) error {
		if r == nil {
			return nil
		}
		return history.ScanReader(ctx, file, r, fn)
	}
}

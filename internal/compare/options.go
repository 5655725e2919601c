package compare

import (
	"fmt"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/option"
)

// NewOptions are a comparison's defaults (compare's flags', evaluate's
// stage's): k 10, exponential gain, relevant from level 2, the primary
// measure Primary, metrics.DefaultResamples resamples and seed.
func NewOptions() Options {
	return Options{K: 10, Gain: metrics.GainExp, RelevantLevel: 2, Primary: Primary, Resamples: metrics.DefaultResamples, Seed: metrics.DefaultSeed}
}

// MaxK is the largest cutoff compare takes (--k).
const MaxK = 100000

// Validate checks the files and the options of a comparison (the gate's are
// GateOptions.Validate).
func (o *Options) Validate(f Files) error {
	switch {
	case f.Qrels == "":
		return option.Required("qrels", "")
	case len(f.Runs) == 0:
		return option.Conflict("--run NAME=FILE is required (repeat it for each strategy)")
	case o.K < 1 || o.K > MaxK:
		return option.Refuse("k", fmt.Sprintf("must be between 1 and %d", MaxK))
	case o.RelevantLevel < 1 || o.RelevantLevel > trecfile.MaxRelevance:
		return option.Refuse("relevant-level", fmt.Sprintf("must be between 1 and %d", trecfile.MaxRelevance))
	case o.Resamples < 1 || o.Resamples > metrics.MaxResamples:
		return option.Refuse("bootstrap", fmt.Sprintf("must be between 1 and %d", metrics.MaxResamples))
	case metrics.QueryIndex(o.Primary) < 0:
		return option.Refuse("primary", "must be one of "+strings.Join(metrics.GradedKeys[:], ", "))
	}
	return nil
}

// Validate checks that the gate is asked for whole: a strategy, and a floor
// or FailIfBeaten on it.
func (g *GateOptions) Validate() error {
	switch {
	case g.Strategy == "" && (len(g.Floors) > 0 || g.FailIfBeaten):
		return option.Conflict(option.Name("floor", "floors"), " and ", option.Name("fail-if-beaten"), " need ", option.Name("gate-strategy"), " NAME (the strategy you run in production)")
	case g.Strategy != "" && len(g.Floors) == 0 && !g.FailIfBeaten:
		return option.Conflict(option.Quoted("gate-strategy", g.Strategy), " needs ", option.Name("floor", "floors"), " MEASURE=F or ", option.Name("fail-if-beaten"))
	}
	return nil
}

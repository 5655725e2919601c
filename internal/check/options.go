package check

import (
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/option"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// MaxDropOption is the option of a regression gate: max_drop_hit is max-drop-hit.
func MaxDropOption(gateName string) string {
	return "max-drop-" + strings.TrimPrefix(gateName, "max_drop_")
}

// ValidateFloors refuses MinHit or MinRecall together with a floor on the
// same measure of the overall group (two thresholds on one number).
func (o *Options) ValidateFloors() error {
	for _, sh := range []struct {
		option string
		set    bool
		key    string
	}{{"min-hit", o.MinHit.Set, metrics.KeyHit}, {"min-recall", o.MinRecall.Set, metrics.KeyRecall}} {
		if s, ok := o.Floors.Find(sh.key, outcome.GroupOverall); sh.set && ok {
			return option.Conflict(option.Name(sh.option), " and ", option.Name("floor", "floors"), " "+s.String()+" both set a floor on "+s.Target()+"; give one")
		}
	}
	return nil
}

// ValidateBaseline checks the regression gates: one per measure of the
// overall group, the test, the rank drop listed.
func (o *Options) ValidateBaseline() error {
	for _, gm := range baseline.GateMeasures {
		if s, ok := o.GroupMaxDrop.Find(gm.Key, outcome.GroupOverall); o.MaxDrop[gm.Key].Set && ok {
			return option.Conflict(option.Name(MaxDropOption(gm.Name)), " and ", option.Name("max-drop", "max-drops"), " "+s.String()+" both set a regression gate on "+s.Target()+"; give one")
		}
	}
	if o.Test != baseline.TestSignificant && o.Test != baseline.TestAny {
		return option.Refuse("regression-test", "must be significant or any")
	}
	if o.RankDrop < 1 {
		return option.Refuse("rank-drop", "must be at least 1")
	}
	return nil
}

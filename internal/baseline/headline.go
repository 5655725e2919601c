package baseline

import (
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// HeadlineMeasure is the overall measure a report's first line states the
// comparison with, so a reviewer never reads a bare verdict above a comparison
// that went the other way. The rule, in order:
//
//  1. the measure of the first failed regression gate on the overall group;
//  2. else hit@k, the success number, when the paired test finds it worse
//     (p < Alpha);
//  3. else the overall measure the paired test finds worse with the smallest p
//     (ties: registry order);
//  4. else hit@k;
//  5. else the first measure the overall group has.
//
// "" when the comparison has no paired overall measure (no baseline, nothing
// paired).
func (c *Comparison) HeadlineMeasure() string {
	if c == nil || !c.Available || len(c.Overall.Stats) == 0 {
		return ""
	}
	has := func(key string) bool {
		for _, s := range c.Overall.Stats {
			if s.Key == key {
				return true
			}
		}
		return false
	}
	for _, g := range c.Gates {
		if g.Status == outcome.Fail && g.Group == outcome.GroupOverall && has(g.Measure) {
			return g.Measure
		}
	}
	for _, s := range c.Overall.Stats {
		if s.Key == metrics.KeyHit && s.Change == ChangeWorse {
			return s.Key
		}
	}
	best := -1
	for i, s := range c.Overall.Stats { // registry order
		if s.Change == ChangeWorse && (best < 0 || s.P < c.Overall.Stats[best].P) {
			best = i
		}
	}
	if best >= 0 {
		return c.Overall.Stats[best].Key
	}
	if has(metrics.KeyHit) {
		return metrics.KeyHit
	}
	return c.Overall.Stats[0].Key
}

// Changes a paired test finds (Stat.Change).
const (
	ChangeWorse  = "worse"
	ChangeBetter = "better"
)

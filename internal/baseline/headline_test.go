package baseline

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

func TestHeadlineMeasure(t *testing.T) {
	stat := func(key, change string, p float64) Stat { return Stat{Key: key, Change: change, P: p} }
	failed := func(measure, group string) outcome.Gate {
		g := outcome.New("max_drop", outcome.Fail)
		g.Measure, g.Group = measure, group
		return g
	}
	for _, c := range []struct {
		name string
		c    *Comparison
		want string
	}{
		{"nil", nil, ""},
		{"unavailable", &Comparison{NoBaseline: &Unavailability{Code: NotInActions}}, ""},
		{"nothing paired", &Comparison{Available: true}, ""},
		{"no change: hit", &Comparison{Available: true, Overall: GroupStats{Stats: []Stat{stat(metrics.KeyHit, "", 0.5), stat(metrics.KeyRecall, "", 0.4)}}}, metrics.KeyHit},
		{"hit worse first", &Comparison{Available: true, Overall: GroupStats{Stats: []Stat{stat(metrics.KeyHit, ChangeWorse, 0.01), stat(metrics.KeyRecall, ChangeWorse, 0.0001)}}}, metrics.KeyHit},
		{"the worse measure with the smallest p", &Comparison{Available: true, Overall: GroupStats{Stats: []Stat{stat(metrics.KeyHit, ChangeBetter, 0.01), stat(metrics.KeyRecall, ChangeWorse, 0.02), stat(metrics.KeyNDCG, ChangeWorse, 0.001)}}}, metrics.KeyNDCG},
		{"a failed overall gate wins", &Comparison{Available: true, Gates: outcome.Gates{failed(metrics.KeyRecall, outcome.GroupOverall)},
			Overall: GroupStats{Stats: []Stat{stat(metrics.KeyHit, ChangeWorse, 0.01), stat(metrics.KeyRecall, "", 0.2)}}}, metrics.KeyRecall},
		{"a failed group gate does not", &Comparison{Available: true, Gates: outcome.Gates{failed(metrics.KeyRecall, "type:golden")},
			Overall: GroupStats{Stats: []Stat{stat(metrics.KeyHit, "", 0.5), stat(metrics.KeyRecall, "", 0.2)}}}, metrics.KeyHit},
		{"precomputed only", &Comparison{Available: true, Overall: GroupStats{Stats: []Stat{stat(metrics.KeyNDCG, "", 0.5)}}}, metrics.KeyNDCG},
	} {
		t.Run(c.name, func(t *testing.T) { assert.Equal(t, c.want, c.c.HeadlineMeasure()) })
	}
}

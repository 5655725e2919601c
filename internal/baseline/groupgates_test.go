package baseline

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
)

// Regression gates per group (issue 21 item 13): 40 golden cases in en with 8
// newly missed (drop 0.2, McNemar p = 2/256) and 20 adversarial cases in pt-BR
// that do not change.
func TestGroupGates(t *testing.T) {
	base := ""
	var cases []cur
	for i := range 60 {
		id := string(rune('A'+i/26)) + string(rune('a'+i%26))
		base += bline(id, "g", 1, 1)
		c := cur{id: id, typ: "golden", locale: "en", gold: []string{"g"}, hit: 1, rank: 1}
		if i < 8 {
			c.hit = 0
		}
		if i >= 40 {
			c.typ, c.locale = "adversarial", "pt-BR"
		}
		cases = append(cases, c)
	}
	b := load(t, base)
	spec := func(group string, v float64) floor.Spec {
		return floor.Spec{Measure: metrics.KeyHit, Group: group, Value: v}
	}
	for _, c := range []struct {
		name   string
		spec   floor.Spec
		test   string
		status outcome.Status
		value  float64
		n      int64
		reason []string
	}{
		{"a type that dropped fails", spec("type:golden", 0.1), "", outcome.Fail, 0.2, 40,
			[]string{"type:golden mean dropped 0.200 (from 1.000 to 0.800), more than the 0.100 tolerated; mcnemar_exact p = 0.0078", "n = 40 paired cases can only detect drops of 0.192 at 80% power (α = 0.05); the tolerance is 0.100"}},
		{"within the tolerance", spec("type:golden", 0.25), "", outcome.Pass, 0.2, 40, []string{"n = 40 paired cases "}},
		{"a type that did not change", spec("type:adversarial", 0), "", outcome.Pass, 0, 20,
			[]string{"n = 20 paired cases can only detect drops of 0.348 at 80% power (α = 0.05); the tolerance is 0.000"}},
		{"a locale is indicative", spec("locale:pt-BR", 0.05), "", outcome.Pass, 0, 20, []string{gatetable.IndicativeLocaleRegression}},
		{"a locale that dropped fails", spec("locale:en", 0.1), TestAny, outcome.Fail, 0.2, 40, []string{"locale:en mean dropped 0.200", gatetable.IndicativeLocaleRegression}},
		{"no such group", spec("type:nope", 0.1), "", outcome.Fail, math.NaN(), 0,
			[]string{"no such group in the data (groups: overall, type:adversarial, type:golden, locale:en, locale:pt-BR)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, b, Options{K: 5, GroupMaxDrop: floor.List{c.spec}, Test: c.test}, cases)
			g, ok := res.Gates.Find(GroupGateName(c.spec))
			require.True(t, ok)
			assert.Equal(t, "max_drop:retrieval_hit_at_k@"+c.spec.Group, g.Name)
			assert.Equal(t, c.status, g.Status)
			assert.Equal(t, c.spec.Group, g.Group)
			assert.Equal(t, c.spec.Value, g.Threshold)
			if math.IsNaN(c.value) {
				assert.True(t, math.IsNaN(g.Value), "no value")
			} else {
				assert.InDelta(t, c.value, g.Value, 1e-12)
			}
			assert.Equal(t, c.n, g.N)
			for _, r := range c.reason {
				assert.Contains(t, gatetable.Reason(g.Why), r)
			}
			assert.Equal(t, c.status, res.Regression, "the group gate decides the regression status")
		})
	}

	// The overall gates state their detectable difference too.
	res := run(t, b, Options{K: 5, MaxDrop: map[string]Tolerance{metrics.KeyHit: {Set: true, Value: 0.5}}}, cases)
	g, _ := res.Gates.Find("max_drop_hit")
	assert.Equal(t, outcome.Pass, g.Status)
	assert.False(t, math.IsNaN(g.Detectable))
	assert.Regexp(t, `^n = 60 paired cases detect drops of 0\.\d{3} at 80% power \(α = 0\.05\); the tolerance is 0\.500$`, gatetable.Reason(g.Why))

	u := Unavailable(Unavailability{Code: NotInActions}, Options{GroupMaxDrop: floor.List{spec("type:golden", 0.1)}})
	g, ok := u.Gates.Find("max_drop:retrieval_hit_at_k@type:golden")
	require.True(t, ok)
	assert.Equal(t, outcome.Off, g.Status)
	assert.Equal(t, "no baseline: --baseline auto looks the baseline up in GitHub Actions; this is not an Actions run", gatetable.Reason(g.Why))
}

// Issue 34 item 4: the per-group gates are one family, Holm-adjusted together.
// 40 golden cases (en) lose 6 hits (McNemar p = 2·½⁶ = 0.03125) and 20
// adversarial cases (pt-BR) do not change: alone, the golden gate fails
// (0.031 < 0.05); beside two other group gates its p is Holm-adjusted over the
// three (0.03125 × 3 = 0.094) and it passes as not significant, saying so.
func TestGroupGatesHolm(t *testing.T) {
	base := ""
	var cases []cur
	for i := range 60 {
		id := string(rune('A'+i/26)) + string(rune('a'+i%26))
		base += bline(id, "g", 1, 1)
		c := cur{id: id, typ: "golden", locale: "en", gold: []string{"g"}, hit: 1, rank: 1}
		if i < 6 {
			c.hit = 0
		}
		if i >= 40 {
			c.typ, c.locale = "adversarial", "pt-BR"
		}
		cases = append(cases, c)
	}
	b := load(t, base)
	spec := func(group string, v float64) floor.Spec {
		return floor.Spec{Measure: metrics.KeyHit, Group: group, Value: v}
	}
	golden := spec("type:golden", 0.1)
	alone := run(t, b, Options{K: 5, GroupMaxDrop: floor.List{golden}}, cases)
	g, _ := alone.Gates.Find(GroupGateName(golden))
	assert.Equal(t, outcome.Fail, g.Status, "alone: p = 0.031 confirms the drop")
	assert.NotContains(t, gatetable.Reason(g.Why), "Holm")

	three := run(t, b, Options{K: 5, GroupMaxDrop: floor.List{golden, spec("locale:en", 0.1), spec("type:adversarial", 0.1)}}, cases)
	g, _ = three.Gates.Find(GroupGateName(golden))
	assert.Equal(t, outcome.Pass, g.Status, "Holm over three gates: 0.094")
	reason := gatetable.Reason(g.Why)
	assert.Contains(t, reason, "but the paired test does not reject (mcnemar_exact p = 0.0938)")
	assert.Contains(t, reason, "the p is Holm-adjusted over the 3 per-group regression gates of this run (unadjusted p = 0.0312)")
	// locale:en holds the same 40 cases: the same test, adjusted the same.
	g, _ = three.Gates.Find(GroupGateName(spec("locale:en", 0.1)))
	assert.Equal(t, outcome.Pass, g.Status)
	// The overall gate is not in the family.
	overall := run(t, b, Options{K: 5, MaxDrop: map[string]Tolerance{metrics.KeyHit: {Set: true, Value: 0.05}}, GroupMaxDrop: floor.List{golden, spec("locale:en", 0.1)}}, cases)
	g, _ = overall.Gates.Find("max_drop_hit")
	assert.NotContains(t, gatetable.Reason(g.Why), "Holm")
}

package calibrate

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

func lockOf(t *testing.T, src string) *labelfile.Lock {
	t.Helper()
	l, err := labelfile.ReadLock([]byte(src), "lock.json")
	require.NoError(t, err)
	return l
}

const twoDimLock = `{"dimensions": {"groundedness": {"construct": "support", "gated": true},
 "faithfulness": {"construct": "contradiction-only", "gated": false}},
 "bins": [0.34, 0.67], "kappa_weighting": "quadratic", "min_kappa": 0.6}`

var (
	labeledAt = time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)
	judgedAt  = time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
)

// row is one label in a compact form: bins per side; a "" construct means the lock's.
type row struct {
	id, dim         string
	human, judge    int // bin; -1: no label on that side
	hCons, jCons    string
	labeled, judged time.Time
}

func build(lock *labelfile.Lock, rows []row) (hs, js []labelfile.Label) {
	for i, r := range rows {
		cons := lock.Dimensions[r.dim].Construct
		hc, jc := cons, cons
		if r.hCons != "" {
			hc = r.hCons
		}
		if r.jCons != "" {
			jc = r.jCons
		}
		la, ja := labeledAt, judgedAt
		if !r.labeled.IsZero() {
			la = r.labeled
		}
		if !r.judged.IsZero() {
			ja = r.judged
		}
		if r.human >= 0 {
			hs = append(hs, labelfile.Label{File: "human.jsonl", Line: i + 1, Side: labelfile.HumanSide, CaseID: r.id, Dimension: r.dim,
				Bin: r.human, HasBin: true, Construct: hc, At: la})
		}
		if r.judge >= 0 {
			js = append(js, labelfile.Label{File: "judge.jsonl", Line: i + 1, Side: labelfile.JudgeSide, CaseID: r.id, Dimension: r.dim,
				Bin: r.judge, HasBin: true, HasScore: true, Construct: jc, At: ja})
		}
	}
	return hs, js
}

// agreeing returns n rows of dimension dim cycling through the bins with the judge
// agreeing, except every fifth case, where the judge is one bin higher (or lower).
func agreeing(dim string, n int) []row {
	rows := make([]row, n)
	for i := range rows {
		h := i % 3
		j := h
		if i%5 == 4 {
			j = (h + 1) % 3
		}
		rows[i] = row{id: fmt.Sprintf("c%03d", i), dim: dim, human: h, judge: j}
	}
	return rows
}

func evaluate(t *testing.T, lock *labelfile.Lock, rows []row) *Result {
	t.Helper()
	hs, js := build(lock, rows)
	r, err := Evaluate(t.Context(), Input{Lock: lock, Human: labelfile.FromLabels(hs), Judge: labelfile.FromLabels(js), Resamples: 500, Seed: metrics.DefaultSeed})
	require.NoError(t, err)
	r.Finish()
	return r
}

func dim(t *testing.T, r *Result, name string) *Dimension {
	t.Helper()
	for _, d := range r.Dimensions {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("no dimension %q", name)
	return nil
}

// A kappa interval carries its method and whether that method's simulated
// coverage at its n is below 0.95 (metrics.UnreliableFor), as check's and
// compare's intervals do: BCa below 30 pairs, the Wilson-disagreement interval
// (no pair disagrees) below 50. Without an interval nothing is flagged.
func TestKappaIntervalUnreliable(t *testing.T) {
	perfect := func(n int) []row {
		rows := make([]row, n)
		for i := range rows {
			rows[i] = row{id: fmt.Sprintf("c%03d", i), dim: "groundedness", human: i % 3, judge: i % 3}
		}
		return rows
	}
	tests := []struct {
		name       string
		rows       []row
		method     string
		unreliable bool
	}{
		{"BCa at 29 pairs", agreeing("groundedness", 29), metrics.KappaCIMethod, true},
		{"BCa at 30 pairs", agreeing("groundedness", 30), metrics.KappaCIMethod, false},
		{"no disagreement at 35 pairs", perfect(35), metrics.MethodWilsonDisagreement, true},
		{"no disagreement at 50 pairs", perfect(50), metrics.MethodWilsonDisagreement, false},
	}
	lock := lockOf(t, twoDimLock)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := dim(t, evaluate(t, lock, tt.rows), "groundedness")
			assert.Equal(t, tt.method, g.CIMethod)
			assert.Equal(t, tt.unreliable, g.Unreliable)
			assert.Equal(t, metrics.UnreliableFor(g.CIMethod, int64(g.N)), g.Unreliable)
		})
	}
	hs, js := build(lock, agreeing("groundedness", 8))
	r, err := Evaluate(t.Context(), Input{Lock: lock, Human: labelfile.FromLabels(hs), Judge: labelfile.FromLabels(js), Seed: metrics.DefaultSeed})
	require.NoError(t, err)
	g := dim(t, r, "groundedness")
	assert.True(t, math.IsNaN(g.CI95[0]), "no resamples, no interval")
	assert.Empty(t, g.CIMethod)
	assert.False(t, g.Unreliable, "no interval, nothing to flag")
}

func TestEvaluatePairsAndMeasures(t *testing.T) {
	lock := lockOf(t, twoDimLock)
	rows := []row{
		{id: "a", dim: "groundedness", human: 0, judge: 0},
		{id: "b", dim: "groundedness", human: 0, judge: 2},
		{id: "c", dim: "groundedness", human: 1, judge: 1},
		{id: "d", dim: "groundedness", human: 2, judge: 1},
		{id: "e", dim: "groundedness", human: 2, judge: 2},
		{id: "f", dim: "groundedness", human: 2, judge: 2},
		{id: "g", dim: "groundedness", human: 1, judge: -1}, // human only
		{id: "h", dim: "groundedness", human: -1, judge: 0}, // judge only
		{id: "a", dim: "faithfulness", human: 2, judge: 2},
	}
	r := evaluate(t, lock, rows)
	require.Len(t, r.Dimensions, 2)
	assert.Equal(t, "faithfulness", r.Dimensions[0].Name, "dimensions sorted by name")

	g := dim(t, r, "groundedness")
	assert.Equal(t, 6, g.N, "unpaired labels are not in n")
	assert.Equal(t, [][]int{{1, 0, 1}, {0, 1, 0}, {0, 1, 2}}, g.Confusion)
	assert.Equal(t, []string{"g"}, g.HumanOnly)
	assert.Equal(t, []string{"h"}, g.JudgeOnly)
	assert.Equal(t, []Disagreement{{"b", 0, 2}}, g.JudgeAbove)
	assert.Equal(t, []Disagreement{{"d", 2, 1}}, g.HumanAbove)
	assert.InDelta(t, 4.0/6, g.Agreement, 1e-12)
	assert.InDelta(t, metrics.CohenKappa(g.Confusion), g.Kappa, 1e-12)
	assert.InDelta(t, metrics.WeightedKappa(g.Confusion, metrics.KappaWeights(3, "quadratic")), g.WeightedKappa, 1e-12)
	assert.False(t, math.IsNaN(g.CI95[0]))
	assert.True(t, g.Valid)
	assert.Contains(t, g.Notes, Note{Code: NoteUnpaired, Human: 1, Judge: 1})

	// faithfulness: one pair in one bin, chance agreement 1: kappa undefined. It
	// is ungated, so it does not fail the gate, but it is reported as fail.
	f := dim(t, r, "faithfulness")
	assert.True(t, math.IsNaN(f.Kappa))
	assert.True(t, math.IsNaN(f.WeightedKappa))
	assert.True(t, math.IsNaN(f.CI95[0]))
	assert.Equal(t, outcome.Fail, f.Status)
	assert.Equal(t, Note{Code: NoteKappaUndefined}, f.Notes[0])
}

func TestEvaluateGate(t *testing.T) {
	lock := lockOf(t, twoDimLock)
	ok := append(agreeing("groundedness", 30), agreeing("faithfulness", 30)...)
	tests := []struct {
		name   string
		rows   []row
		status map[string]string
		failed []string
	}{
		{"agreement passes", ok, map[string]string{"groundedness": "pass", "faithfulness": "pass"}, nil},
		{"below min_kappa", append(agreeing("faithfulness", 30), []row{
			{id: "a", dim: "groundedness", human: 0, judge: 2}, {id: "b", dim: "groundedness", human: 2, judge: 0},
			{id: "c", dim: "groundedness", human: 1, judge: 1}, {id: "d", dim: "groundedness", human: 0, judge: 0},
		}...), map[string]string{"groundedness": "fail", "faithfulness": "pass"}, []string{"kappa:groundedness"}},
		{"gated dimension with undefined kappa fails", append(agreeing("faithfulness", 30), []row{
			{id: "a", dim: "groundedness", human: 2, judge: 2}, {id: "b", dim: "groundedness", human: 2, judge: 2},
		}...), map[string]string{"groundedness": "fail", "faithfulness": "pass"}, []string{"kappa:groundedness"}},
		{"gated dimension without labels fails", agreeing("faithfulness", 30),
			map[string]string{"groundedness": "fail", "faithfulness": "pass"}, []string{"kappa:groundedness"}},
		{"ungated dimension below min_kappa does not fail the gate", append(agreeing("groundedness", 30), []row{
			{id: "a", dim: "faithfulness", human: 0, judge: 2}, {id: "b", dim: "faithfulness", human: 2, judge: 0},
		}...), map[string]string{"groundedness": "pass", "faithfulness": "fail"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := evaluate(t, lock, tt.rows)
			got := map[string]string{}
			for _, d := range r.Dimensions {
				got[d.Name] = string(d.Status)
			}
			assert.Equal(t, tt.status, got)
			assert.Equal(t, tt.failed, r.Failed())
			for _, d := range r.Dimensions {
				if d.Status == outcome.Fail {
					assert.NotEmpty(t, d.Notes, "%s: a failing dimension says why", d.Name)
				}
			}
			if tt.failed == nil {
				assert.Equal(t, outcome.Status("pass"), r.Verdict())
			} else {
				assert.Equal(t, outcome.Status("fail"), r.Verdict())
			}
		})
	}
}

func TestConstructMismatch(t *testing.T) {
	lock := lockOf(t, twoDimLock)
	tests := []struct {
		name    string
		mutate  func(rows []row)
		reasons []string
		human   []string
		judge   []string
	}{
		{"judge measures another construct", func(rows []row) {
			for i := range rows {
				if rows[i].dim == "groundedness" {
					rows[i].jCons = "relevance"
				}
			}
		}, nil, []string{"support"}, []string{"relevance"}},
		{"one human label measures another construct", func(rows []row) {
			rows[3].hCons = "support-v2"
		}, []string{`c003: human construct "support-v2" (human.jsonl:4) differs from the lock's "support"`}, []string{"support", "support-v2"}, []string{"support"}},
		{"an unpaired label counts too", func(rows []row) {
			rows[0].judge = -1
			rows[0].hCons = "entailment"
		}, []string{`c000: human construct "entailment" (human.jsonl:1) differs from the lock's "support"`}, []string{"entailment", "support"}, []string{"support"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := append(agreeing("groundedness", 30), agreeing("faithfulness", 30)...)
			tt.mutate(rows)
			r := evaluate(t, lock, rows)
			g := dim(t, r, "groundedness")
			assert.Equal(t, StatusConstructMismatch, g.Status)
			assert.False(t, g.Valid, "the kappa is not a valid measurement")
			assert.Equal(t, tt.human, g.HumanConstructs)
			assert.Equal(t, tt.judge, g.JudgeConstructs)
			require.NotEmpty(t, g.Violations)
			if tt.reasons != nil {
				var got []string
				for _, v := range g.Violations {
					require.Equal(t, ConstructMismatch, v.Kind)
					got = append(got, fmt.Sprintf("%s: %s construct %q (%s:%d) differs from the lock's %q", v.CaseID, v.Side, v.Construct, v.File, v.Line, v.Want))
				}
				assert.Equal(t, tt.reasons, got)
			}
			assert.Contains(t, g.Notes, Note{Code: NoteConstructMismatch, Construct: "support", HumanConstructs: tt.human, JudgeConstructs: tt.judge})
			assert.Equal(t, []string{"kappa:groundedness"}, r.Failed())
			assert.Equal(t, outcome.Pass, dim(t, r, "faithfulness").Status)
		})
	}
}

func TestAnchoringViolation(t *testing.T) {
	lock := lockOf(t, twoDimLock)
	tests := []struct {
		name       string
		labeled    time.Time
		judged     time.Time
		violations int
	}{
		{"label older than judge", labeledAt, judgedAt, 0},
		{"label at the same instant", judgedAt, judgedAt, 1},
		{"label after the judge", judgedAt.Add(time.Second), judgedAt, 1},
		{"same instant in another zone", judgedAt.In(time.FixedZone("BRT", -3*3600)), judgedAt, 1},
		{"nanosecond earlier", judgedAt.Add(-time.Nanosecond), judgedAt, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := append(agreeing("groundedness", 30), agreeing("faithfulness", 30)...)
			rows[7].labeled, rows[7].judged = tt.labeled, tt.judged
			r := evaluate(t, lock, rows)
			g := dim(t, r, "groundedness")
			require.Len(t, g.Violations, tt.violations)
			if tt.violations == 0 {
				assert.Equal(t, outcome.Pass, g.Status)
				assert.Empty(t, r.Failed())
				return
			}
			assert.Equal(t, StatusAnchoringViolation, g.Status)
			assert.Equal(t, "c007", g.Violations[0].CaseID)
			v := g.Violations[0]
			assert.Equal(t, NotEarlier, v.Kind)
			assert.True(t, v.LabeledAt.Equal(tt.labeled) && v.JudgedAt.Equal(tt.judged), "%v", v)
			assert.Equal(t, [2]string{"human.jsonl", "judge.jsonl"}, [2]string{v.File, v.JudgeFile})
			assert.True(t, g.Valid, "an anchoring violation keeps the numbers, but fails")
			assert.Equal(t, []string{"kappa:groundedness"}, r.Failed())
		})
	}

	// Violations on an ungated dimension fail the gate too: they are integrity problems.
	rows := append(agreeing("groundedness", 30), agreeing("faithfulness", 30)...)
	rows[40].labeled = judgedAt
	r := evaluate(t, lock, rows)
	assert.Equal(t, StatusAnchoringViolation, dim(t, r, "faithfulness").Status)
	assert.Equal(t, []string{"kappa:faithfulness"}, r.Failed())
}

func TestConstructMismatchWinsOverAnchoring(t *testing.T) {
	lock := lockOf(t, twoDimLock)
	rows := append(agreeing("groundedness", 30), agreeing("faithfulness", 30)...)
	rows[1].labeled = judgedAt
	rows[2].jCons = "relevance"
	g := dim(t, evaluate(t, lock, rows), "groundedness")
	assert.Equal(t, StatusConstructMismatch, g.Status)
	require.Len(t, g.Violations, 2)
	assert.Equal(t, "c002", g.Violations[0].CaseID, "construct violations first")
	assert.Equal(t, "c001", g.Violations[1].CaseID)
}

func TestEvaluateDeterministic(t *testing.T) {
	lock := lockOf(t, twoDimLock)
	rows := append(agreeing("groundedness", 50), agreeing("faithfulness", 50)...)
	a := evaluate(t, lock, rows)
	// Same labels in reverse file order: same result.
	rev := make([]row, len(rows))
	for i := range rows {
		rev[len(rows)-1-i] = rows[i]
	}
	b := evaluate(t, lock, rev)
	for i := range a.Dimensions {
		da, db := a.Dimensions[i], b.Dimensions[i]
		assert.Equal(t, da.CI95, db.CI95)
		assert.Equal(t, da.WeightedKappa, db.WeightedKappa)
		assert.Equal(t, da.JudgeAbove, db.JudgeAbove)
	}
}

func TestParseUnpairedLimit(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    UnpairedLimit
		wantErr bool
	}{
		{in: "0", want: UnpairedLimit{Spec: "0", Count: 0}},
		{in: " 3 ", want: UnpairedLimit{Spec: "3", Count: 3}},
		{in: strconv.Itoa(math.MaxInt), want: UnpairedLimit{Spec: strconv.Itoa(math.MaxInt), Count: math.MaxInt}},
		{in: "5%", want: UnpairedLimit{Spec: "5%", Value: 5, Percent: true}},
		{in: "2.5%", want: UnpairedLimit{Spec: "2.5%", Value: 2.5, Percent: true}},
		{in: "100%", want: UnpairedLimit{Spec: "100%", Value: 100, Percent: true}},
		{in: "-1", wantErr: true},
		{in: "1.5", wantErr: true},
		{in: "101%", wantErr: true},
		{in: "-1%", wantErr: true},
		{in: "NaN%", wantErr: true},
		{in: "%", wantErr: true},
		{in: "", wantErr: true},
		{in: "many", wantErr: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseUnpairedLimit(tc.in)
			if tc.wantErr {
				assert.ErrorContains(t, err, "want a count N or a percentage P%")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, *got)
		})
	}
	pct := &UnpairedLimit{Value: 5, Percent: true}
	assert.Equal(t, 1, pct.Allowed(32)) // ⌊1.6⌋
	assert.Equal(t, 2, pct.Allowed(40)) // exactly 2, not rounded down by float error
	assert.Equal(t, 0, pct.Allowed(19))
	assert.Equal(t, 7, (&UnpairedLimit{Count: 7}).Allowed(3))
	big, err := ParseUnpairedLimit("9223372036854775807")
	require.NoError(t, err)
	assert.Equal(t, math.MaxInt, big.Allowed(3), "a huge count allows everything, it never wraps")
}

// Dropping the judge scores of the cases that disagree raises kappa; they are then
// only unpaired. --max-unpaired makes that fail the gate.
func TestMaxUnpaired(t *testing.T) {
	lock := lockOf(t, twoDimLock) // groundedness gated, faithfulness not
	rows := append(agreeing("groundedness", 30), agreeing("faithfulness", 30)...)
	// Two disagreeing groundedness cases whose judge scores were "lost", and one
	// human label missing; five unpaired faithfulness labels (ungated).
	rows = append(rows,
		row{id: "x1", dim: "groundedness", human: 0, judge: -1},
		row{id: "x2", dim: "groundedness", human: 2, judge: -1},
		row{id: "x3", dim: "groundedness", human: -1, judge: 1},
	)
	for i := range 5 {
		rows = append(rows, row{id: fmt.Sprintf("y%d", i), dim: "faithfulness", human: 1, judge: -1})
	}
	tests := []struct {
		limit   string // "" no limit
		allowed int    // groundedness; -1 no limit
		over    bool
		failed  []string
	}{
		{"", -1, false, nil},
		{"3", 3, false, nil},
		{"2", 2, true, []string{"unpaired:groundedness"}},
		{"0", 0, true, []string{"unpaired:groundedness"}},
		{"10%", 3, false, nil},                             // ⌊10% of 33⌋ = 3
		{"5%", 1, true, []string{"unpaired:groundedness"}}, // ⌊5% of 33⌋ = 1
	}
	for _, tt := range tests {
		t.Run("limit "+tt.limit, func(t *testing.T) {
			hs, js := build(lock, rows)
			in := Input{Lock: lock, Human: labelfile.FromLabels(hs), Judge: labelfile.FromLabels(js), Resamples: 200, Seed: metrics.DefaultSeed}
			if tt.limit != "" {
				l, err := ParseUnpairedLimit(tt.limit)
				require.NoError(t, err)
				in.MaxUnpaired = l
			}
			r, err := Evaluate(t.Context(), in)
			require.NoError(t, err)
			r.Finish()
			g, f := dim(t, r, "groundedness"), dim(t, r, "faithfulness")
			assert.Equal(t, outcome.Pass, g.Status, "the kappa status is unchanged")
			assert.Equal(t, []string{"x1", "x2"}, g.HumanOnly)
			assert.Equal(t, []string{"x3"}, g.JudgeOnly)
			assert.Equal(t, tt.allowed, g.UnpairedAllowed)
			assert.Equal(t, tt.over, g.UnpairedOver)
			// The ungated dimension is never limited, whatever its unpaired labels.
			assert.Equal(t, -1, f.UnpairedAllowed)
			assert.False(t, f.UnpairedOver)
			assert.Equal(t, tt.failed, r.Failed())
			if tt.over {
				assert.Equal(t, outcome.Status("fail"), r.Verdict())
				assert.Contains(t, g.Notes, Note{Code: NoteTooManyUnpaired, N: 3, Spec: tt.limit, Limit: tt.allowed, Of: 33})
			} else {
				assert.Equal(t, outcome.Status("pass"), r.Verdict())
				assert.NotContains(t, noteCodes(g.Notes), NoteTooManyUnpaired)
			}
		})
	}
}

func FuzzParseUnpairedLimit(f *testing.F) {
	for _, s := range []string{"0", "3", "5%", "2.5%", "100%", "101%", "-1", " 7 ", "%", "1e2%", "0x10", "NaN%", "Inf%", "9223372036854775807", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseUnpairedLimit(s)
		if err != nil {
			return
		}
		if l.Percent {
			require.True(t, l.Value >= 0 && l.Value <= 100, "%q -> %v", s, l.Value)
		} else {
			require.GreaterOrEqual(t, l.Count, 0, "%q", s)
		}
		for _, total := range []int{0, 1, 33, 1 << 20} {
			a := l.Allowed(total)
			require.GreaterOrEqual(t, a, 0)
			if l.Percent {
				require.LessOrEqual(t, a, total)
			}
		}
		again, err := ParseUnpairedLimit(l.Spec)
		require.NoError(t, err)
		require.Equal(t, *l, *again)
	})
}

func TestMinN(t *testing.T) {
	twoAgreeing := []row{
		{id: "a", dim: "groundedness", human: 0, judge: 0}, {id: "b", dim: "groundedness", human: 2, judge: 2},
	}
	withMinN := func(n string) *labelfile.Lock {
		return lockOf(t, strings.Replace(twoDimLock, `"min_kappa": 0.6`, `"min_kappa": 0.6, "min_n": `+n, 1))
	}
	tests := []struct {
		name   string
		lock   *labelfile.Lock
		rows   []row
		status outcome.Status
		failed []string
		note   *Note
	}{
		// Issue 11: two perfectly agreeing pairs gave kappa 1, CI [1, 1], "pass".
		{"two agreeing pairs under the default", lockOf(t, twoDimLock), twoAgreeing, outcome.Fail, []string{"kappa:groundedness"},
			&Note{Code: NoteBelowMinN, N: 2, Limit: 30, DefaultMinN: true, Gated: true}},
		{"two agreeing pairs under min_n 2", withMinN("2"), twoAgreeing, outcome.Pass, nil, nil},
		{"29 pairs under the default", lockOf(t, twoDimLock), agreeing("groundedness", 29), outcome.Fail, []string{"kappa:groundedness"},
			&Note{Code: NoteBelowMinN, N: 29, Limit: 30, DefaultMinN: true, Gated: true}},
		{"30 pairs under the default", lockOf(t, twoDimLock), agreeing("groundedness", 30), outcome.Pass, nil, nil},
		{"set by the lock", withMinN("50"), agreeing("groundedness", 40), outcome.Fail, []string{"kappa:groundedness"},
			&Note{Code: NoteBelowMinN, N: 40, Limit: 50, Gated: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := append(append([]row{}, tt.rows...), agreeing("faithfulness", 60)...)
			r := evaluate(t, tt.lock, rows)
			g := dim(t, r, "groundedness")
			assert.Equal(t, tt.status, g.Status)
			assert.Equal(t, tt.failed, r.Failed())
			assert.Equal(t, tt.lock.MinN, g.MinN)
			assert.Equal(t, tt.note != nil, g.BelowMinN)
			if tt.note != nil {
				assert.Contains(t, g.Notes, *tt.note)
			}
			assert.Less(t, g.CI95[0], g.CI95[1], "never a point interval")
		})
	}

	// The two agreeing pairs' interval is not [1, 1].
	r := evaluate(t, lockOf(t, twoDimLock), append(twoAgreeing, agreeing("faithfulness", 60)...))
	g := dim(t, r, "groundedness")
	assert.Equal(t, 1.0, g.WeightedKappa)
	assert.Equal(t, metrics.MethodWilsonDisagreement, g.CIMethod)
	assert.Less(t, g.CI95[0], 1.0)
	assert.True(t, g.Unreliable, "an interval over two pairs is flagged")

	// An ungated dimension below min_n is reported, not failed.
	r = evaluate(t, lockOf(t, twoDimLock), append(agreeing("groundedness", 30), agreeing("faithfulness", 10)...))
	f := dim(t, r, "faithfulness")
	assert.True(t, f.BelowMinN)
	assert.Equal(t, outcome.Pass, f.Status)
	assert.Nil(t, r.Failed())
	assert.Contains(t, f.Notes, Note{Code: NoteBelowMinN, N: 10, Limit: 30, DefaultMinN: true, Gated: false})
}

// noteCodes are the codes of notes, in order.
func noteCodes(notes []Note) []NoteCode {
	out := make([]NoteCode, len(notes))
	for i, n := range notes {
		out[i] = n.Code
	}
	return out
}

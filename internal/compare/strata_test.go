package compare_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// localeWorld is 100 queries with one document d: 60 en (the judge grades d
// 1), 40 pt-BR (the judge grades d 3). People grade d in en 1 on 27 of the
// 30 labelled queries and 0 on 3; in pt-BR 2 on 5 of the 10 labelled and 0
// on 5. The judge is constant within each locale, so each locale's λ̂ is 0
// and its estimate the mean of its human values. Strategy "x" retrieves d,
// "y" retrieves nothing on the pt-BR queries.
func localeWorld(t *testing.T) (*trecfile.Qrels, []compare.Input, compare.Options) {
	var qr, sh strings.Builder
	var xs, ys []trecfile.RunQuery
	qs := compare.Queries{}
	for i := range 100 {
		id := fmt.Sprintf("q%03d", i)
		loc, j := "en", 1
		if i >= 60 {
			loc, j = "pt-br", 3 // canonical: pt-BR
		}
		qs[id] = compare.Query{Locale: loc}
		fmt.Fprintf(&qr, "%s 0 d %d\n", id, j)
		xs = append(xs, trecfile.RunQuery{ID: id, Docs: []string{"d"}})
		if i < 60 {
			ys = append(ys, trecfile.RunQuery{ID: id, Docs: []string{"d"}})
		}
		switch {
		case i < 30:
			g := 1
			if i < 3 {
				g = 0
			}
			fmt.Fprintf(&sh, "%s,d,%d\n", id, g)
		case i >= 60 && i < 70:
			g := 2
			if i%2 == 0 {
				g = 0
			}
			fmt.Fprintf(&sh, "%s,d,%d\n", id, g)
		}
	}
	o := opts()
	o.K = 1
	o.HumanSheet = sheet(t, sh.String())
	o.Queries, o.QueriesFile = qs, "cases.jsonl"
	return qrels(t, qr.String()), []compare.Input{{Name: "x", Run: run("x.run", xs...)}, {Name: "y", Run: run("y.run", ys...)}}, o
}

// Issue 34 item 3 by hand: DCG@1 of x is stratified by locale, Σ W_h·θ̂_h
// with W the locales' shares of the evaluated queries (0.6, 0.4), not the
// labelled ones (30 and 10: the pooled human mean weighs en 0.75).
func TestHumanStratifiedByHand(t *testing.T) {
	q, runs, o := localeWorld(t)
	res, err := compare.Compare(q, runs, o)
	require.NoError(t, err)
	h := res.Human
	require.NotNil(t, h.Strata)
	st := h.Strata
	assert.Equal(t, "cases.jsonl", st.File)
	assert.Equal(t, []compare.LocaleStratum{{Locale: "en", Queries: 60, Labelled: 30, Weight: 0.6}, {Locale: "pt-BR", Queries: 40, Labelled: 10, Weight: 0.4}}, st.Locales)
	assert.Equal(t, 2, st.NumStrata)
	assert.False(t, st.Pooled)
	dcg := metrics.QueryIndex("dcg_at_k")
	// en: 27 ones and 3 zeros; pt-BR: 5 threes and 5 zeros.
	mEn, mPt := 0.9, 1.5
	vEn, vPt := 30*0.9*0.1/29/30, (5*2.25+5*2.25)/9/10 // s²/n: the jackknife's at λ̂ = 0
	v := 0.36*vEn + 0.16*vPt
	df := v * v / (0.36*0.36*vEn*vEn/29 + 0.16*0.16*vPt*vPt/9)
	tq := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(0.975)
	e := h.Means[0][dcg]
	assert.Equal(t, metrics.MethodPPIStratified, e.Method)
	assert.InDelta(t, 0.6*mEn+0.4*mPt, e.Estimate, 1e-12)
	assert.InDelta(t, 1.14, e.Estimate, 1e-12)
	assert.InDelta(t, math.Sqrt(v), e.SE, 1e-12)
	assert.InDelta(t, 1.14-tq*math.Sqrt(v), e.Lo, 1e-9)
	assert.InDelta(t, 1.14+tq*math.Sqrt(v), e.Hi, 1e-9)
	assert.Equal(t, 40, e.N)
	assert.Equal(t, 60, e.Others)
	assert.InDelta(t, (27+15)/40.0, h.HumanOnly[0][dcg].Estimate, 1e-12, "the human-only mean stays pooled")
	// Each locale's own estimate.
	en, pt := h.ByLocale[0][0][dcg], h.ByLocale[1][0][dcg]
	assert.InDelta(t, mEn, en.Estimate, 1e-12)
	assert.InDelta(t, math.Sqrt(vEn), en.SE, 1e-12)
	assert.Equal(t, 30, en.N)
	assert.InDelta(t, mPt, pt.Estimate, 1e-12)
	assert.Equal(t, 10, pt.N)
	// y retrieves nothing in pt-BR: the paired difference x − y is 0 in en
	// and x's value in pt-BR, tested with the Welch–Satterthwaite t.
	var pd compare.Paired
	for _, p := range h.Paired {
		if p.Metric == "dcg_at_k" {
			pd = p
		}
	}
	assert.Equal(t, compare.PMethodPPIStratified, pd.PMethod)
	assert.InDelta(t, -0.4*mPt, pd.Delta, 1e-12)
	seD := 0.4 * math.Sqrt(vPt)
	assert.InDelta(t, 2*distuv.StudentsT{Mu: 0, Sigma: 1, Nu: 9}.Survival(0.4*mPt/seD), pd.P, 1e-9)
	// The floor on x uses the stratified estimate.
	o.Gate = compare.GateOptions{Strategy: "x", Floors: floor.List{{Measure: "dcg_at_k", Value: 1.2}}}
	res, err = compare.Compare(q, runs, o)
	require.NoError(t, err)
	require.Len(t, res.Gates, 1)
	assert.Equal(t, "fail", string(res.Gates[0].Status))
	assert.InDelta(t, 1.14, res.Gates[0].Value, 1e-12)
	assert.Equal(t, int64(40), res.Gates[0].N)
}

// Without the queries' locales, or with one locale, the estimate is pooled
// exactly as before.
func TestHumanStratifiedPooled(t *testing.T) {
	q, runs, o := localeWorld(t)
	dcg := metrics.QueryIndex("dcg_at_k")
	pooled := func(o compare.Options) compare.Human {
		res, err := compare.Compare(q, runs, o)
		require.NoError(t, err)
		return *res.Human
	}
	noLocales := o
	noLocales.Queries = nil
	base := pooled(noLocales)
	assert.Nil(t, base.Strata)
	assert.Equal(t, metrics.MethodPPIJackknife, base.Means[0][dcg].Method)
	one := o
	one.Queries = compare.Queries{}
	for id := range o.Queries {
		one.Queries[id] = compare.Query{Locale: "en"}
	}
	h := pooled(one)
	assert.Nil(t, h.Strata)
	assert.Equal(t, base.Means, h.Means)
	assert.Equal(t, base.Paired, h.Paired)
	// A locale with fewer than 10 labelled queries shares a stratum with the
	// others like it; alone, that stratum is too small: pooled, said so.
	few := o
	few.Queries = compare.Queries{}
	for id, qu := range o.Queries {
		few.Queries[id] = qu
	}
	for i, loc := range []string{"de", "de", "de", "de", "es", "es", "es", "es", "es"} {
		few.Queries[fmt.Sprintf("q%03d", i)] = compare.Query{Locale: loc}
	}
	h = pooled(few)
	require.NotNil(t, h.Strata)
	assert.Equal(t, []string{"de", "es"}, h.Strata.Shared)
	assert.Equal(t, 9, h.Strata.SharedN)
	assert.True(t, h.Strata.Pooled)
	assert.Equal(t, metrics.MethodPPIJackknife, h.Means[0][dcg].Method)
	require.Len(t, h.ByLocale, 4) // de, en, es, pt-BR
	assert.Equal(t, 4, h.ByLocale[0][0][dcg].N)
	few.Queries["q009"] = compare.Query{Locale: "fr"}
	h = pooled(few)
	assert.False(t, h.Strata.Pooled)
	assert.Equal(t, 10, h.Strata.SharedN)
	assert.Equal(t, 3, h.Strata.NumStrata) // en, pt-BR, and de + es + fr
	assert.Equal(t, []int{2, 0, 2, 2, 1}, h.Strata.Stratum)
	assert.Equal(t, metrics.MethodPPIStratified, h.Means[0][dcg].Method)
}

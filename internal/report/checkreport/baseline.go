package checkreport

import (
	"cmp"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
)

// The "vs base" section of the check document: the key `baseline`, present only
// when check ran with --baseline (an additive key of aggregates@1: a reader that
// ignores unknown keys reads the document as before, and Read reads both).

// LocalePairedNote labels the per-locale comparison wherever it is shown.
const LocalePairedNote = "indicative only: a locale's n is small and its tests are not corrected for the number of locales"

// Baseline statuses.
const (
	BaselineCompared    = "compared"
	BaselineUnavailable = "unavailable"
)

// Baseline is the comparison with a baseline run.
type Baseline struct {
	ByLocale       map[string]PairedGroup `json:"by_locale"`
	ByLocaleNote   string                 `json:"by_locale_note"`
	ByType         map[string]PairedGroup `json:"by_type"`
	Cases          BaselineCases          `json:"cases"`
	Churn          *Churn                 `json:"churn,omitempty"` // the churn of the top k and its gates (churn.go)
	Commit         string                 `json:"commit"`
	CreatedAt      string                 `json:"created_at"`
	Differences    []BaselineDifference   `json:"differences"`
	File           string                 `json:"file"`
	Flips          Flips                  `json:"flips"`
	Format         string                 `json:"format"`
	K              int                    `json:"k"`
	KBFingerprint  string                 `json:"kb_fingerprint"`
	Lacks          []string               `json:"lacks"`
	Overall        PairedGroup            `json:"overall"`
	Overlap        *Overlap               `json:"overlap,omitempty"` // rank-biased overlap of the top k (overlap.go)
	Reason         string                 `json:"reason,omitempty"`
	Regression     outcome.Status         `json:"regression"`
	RegressionTest string                 `json:"regression_test"`
	Schema         string                 `json:"schema"`
	Source         map[string]string      `json:"source,omitempty"`
	Stale          bool                   `json:"stale"`
	Status         string                 `json:"status"`
	Unpaired       Unpaired               `json:"unpaired"`

	// HeadlineMeasure is the overall measure the report's first line states
	// the comparison with (baseline.Comparison.HeadlineMeasure); "" when none.
	HeadlineMeasure string `json:"headline_measure"`
}

// BaselineCases counts the join.
type BaselineCases struct {
	Baseline       int64 `json:"baseline"`
	GoldChanged    int64 `json:"gold_changed"`
	OnlyInBaseline int64 `json:"only_in_baseline"`
	OnlyInCurrent  int64 `json:"only_in_current"`
	Paired         int64 `json:"paired"`
	WithoutGold    int64 `json:"without_gold"` // in both runs: nothing to compare
}

// BaselineDifference is a setting in which the baseline differs from this run.
type BaselineDifference struct {
	Baseline    string `json:"baseline"`
	Consequence string `json:"consequence"`
	Current     string `json:"current"`
	Field       string `json:"field"`
}

// PairedGroup is a group's paired comparison; N counts its paired cases.
type PairedGroup struct {
	Metrics map[string]Paired `json:"metrics"`
	N       int64             `json:"n"`
}

// Paired is one measure's paired comparison.
type Paired struct {
	Baseline   format.Float    `json:"baseline"`
	CI95       [2]format.Float `json:"ci95"`
	CI95Method string          `json:"ci95_method"`      // how ci95 was computed (mcnemar-inverted for hit, rule-of-three when no case changed, hall-t-betting below 50 pairs or 20 changed ones, else hall-t; docs/statistics.md)
	Change     string          `json:"change,omitempty"` // worse / better, only where the test rejects
	Current    format.Float    `json:"current"`
	Delta      format.Float    `json:"delta"`
	Discordant *[2]int64       `json:"discordant,omitempty"` // [worse, better] for a 0/1 measure
	MDD        format.Float    `json:"mdd"`
	N          int64           `json:"n"`
	P          format.Float    `json:"p"`
	Rejects    bool            `json:"rejects"`
	Test       string          `json:"test"`
	Unreliable bool            `json:"unreliable"` // the interval's method covers less than 0.95 at this n in simulation
	// Note is "methods" when the interval and the test disagree (the test
	// decides; baseline.NoteMethods); absent when they agree.
	Note string `json:"note,omitempty"`
	// Clusters: the clusters the n cases fall into when the interval and the
	// test are computed over clusters (cases with a cluster key); absent
	// otherwise.
	Clusters int64 `json:"clusters,omitempty"`
}

// Flips are the cases whose retrieval changed, newly missed first.
type Flips struct {
	NewlyFound        []Flip `json:"newly_found"`
	NewlyFoundTotal   int64  `json:"newly_found_total"`
	NewlyMissed       []Flip `json:"newly_missed"`
	NewlyMissedTotal  int64  `json:"newly_missed_total"`
	RankDropThreshold int    `json:"rank_drop_threshold"`
	RankDrops         []Flip `json:"rank_drops"`
	RankDropsTotal    int64  `json:"rank_drops_total"`
}

// Flip is one case that flipped; Before and After are the top k (null when unknown).
type Flip struct {
	After      []string `json:"after"`
	Before     []string `json:"before"`
	CaseID     string   `json:"case_id"`
	File       string   `json:"file"`
	Gold       []string `json:"gold"`
	Line       int      `json:"line"`
	Locale     string   `json:"locale"`
	Query      string   `json:"query"`
	RankAfter  int      `json:"rank_after"`
	RankBefore int      `json:"rank_before"`
	// RBO is the rank-biased overlap of Before and After (null when one is unknown).
	RBO  format.Float `json:"rbo"`
	Type string       `json:"type"`
}

// Unpaired lists the cases that are not compared (the first of each kind).
type Unpaired struct {
	GoldChanged    []GoldChanged `json:"gold_changed"`
	OnlyInBaseline []CaseRef     `json:"only_in_baseline"`
	OnlyInCurrent  []CaseRef     `json:"only_in_current"`
}

// CaseRef names a case; for a baseline case File is the baseline file and Line its line there.
type CaseRef struct {
	CaseID string `json:"case_id"`
	File   string `json:"file"`
	Line   int    `json:"line"`
}

// GoldChanged is a case whose gold set changed between the runs.
type GoldChanged struct {
	After  []string `json:"after"`
	Before []string `json:"before"`
	CaseID string   `json:"case_id"`
	File   string   `json:"file"`
	Line   int      `json:"line"`
}

func pairedGroup(g baseline.GroupStats) PairedGroup {
	pg := PairedGroup{N: g.N, Metrics: make(map[string]Paired, len(g.Stats))}
	for _, s := range g.Stats {
		p := Paired{Baseline: format.Float(s.Base), Current: format.Float(s.Cur), Delta: format.Float(s.Delta),
			CI95: format.CI(s.CI95), CI95Method: s.CI95Method, MDD: format.Float(s.MDD), N: s.N, P: format.Float(s.P), Rejects: s.Rejects, Unreliable: s.Unreliable,
			Test: s.Test, Change: s.Change, Note: s.Note, Clusters: s.Clusters}
		if s.HasDiscordant {
			d := s.Discordant
			p.Discordant = &d
		}
		pg.Metrics[s.Key] = p
	}
	return pg
}

func flips(fs []baseline.Flip) []Flip {
	out := make([]Flip, 0, len(fs))
	for _, f := range fs {
		out = append(out, Flip{CaseID: f.ID, File: f.File, Line: f.Line, Locale: f.Locale, Type: f.Type, Query: f.Query,
			Gold: f.Gold, Before: f.Before, After: f.After, RankBefore: f.RankBefore, RankAfter: f.RankAfter, RBO: format.Float(f.RBO)})
	}
	return out
}

// SetBaseline adds the comparison with a baseline (nil: none) to the document.
func (d *Document) SetBaseline(c *baseline.Comparison) {
	if c == nil {
		d.Baseline = nil
		return
	}
	b := &Baseline{Status: BaselineCompared, Regression: c.Regression, RegressionTest: c.Test,
		ByType: map[string]PairedGroup{}, ByLocale: map[string]PairedGroup{}, ByLocaleNote: LocalePairedNote,
		Differences: []BaselineDifference{}, Lacks: []string{}, Source: c.Source}
	d.Baseline = b
	if !c.Available {
		b.Status, b.Reason = BaselineUnavailable, gatetable.NoBaseline(c.NoBaseline.Code, c.NoBaseline.Detail)
		return
	}
	b.File, b.Format, b.Schema, b.Commit, b.K, b.KBFingerprint, b.Stale = c.File, c.Format, c.Schema, c.Commit, c.K, c.KBFingerprint, c.Stale
	if !c.CreatedAt.IsZero() {
		b.CreatedAt = c.CreatedAt.UTC().Format(time.RFC3339)
	}
	b.Lacks = append(b.Lacks, c.Lacks...)
	b.HeadlineMeasure = c.HeadlineMeasure()
	for _, x := range c.Differences {
		b.Differences = append(b.Differences, BaselineDifference{Field: string(x.Field), Baseline: x.Baseline, Current: x.Ours, Consequence: DifferenceConsequence(x.Field)})
	}
	b.Cases = BaselineCases{Baseline: c.BaselineCases, Paired: c.Paired, OnlyInBaseline: c.OnlyBaseline,
		OnlyInCurrent: c.OnlyCurrent, GoldChanged: c.GoldChanged, WithoutGold: c.NoGold}
	b.Overall = pairedGroup(c.Overall)
	for _, g := range c.ByType {
		b.ByType[g.Name] = pairedGroup(g)
	}
	for _, g := range c.ByLocale {
		b.ByLocale[g.Name] = pairedGroup(g)
	}
	b.Flips = Flips{NewlyMissed: flips(c.NewlyMissed), NewlyMissedTotal: c.NewlyMissedTotal,
		NewlyFound: flips(c.NewlyFound), NewlyFoundTotal: c.NewlyFoundTotal,
		RankDrops: flips(c.RankDrops), RankDropsTotal: c.RankDropsTotal, RankDropThreshold: c.RankDrop}
	b.Overlap = overlapOf(c.Overlap)
	b.Churn = churnOf(c.Churn, c.ChurnStatus)
	b.Unpaired = Unpaired{GoldChanged: []GoldChanged{}, OnlyInBaseline: []CaseRef{}, OnlyInCurrent: []CaseRef{}}
	for _, r := range c.OnlyBaselineList {
		b.Unpaired.OnlyInBaseline = append(b.Unpaired.OnlyInBaseline, CaseRef{CaseID: r.ID, File: cmp.Or(r.File, c.File), Line: r.Line})
	}
	for _, r := range c.OnlyCurrentList {
		b.Unpaired.OnlyInCurrent = append(b.Unpaired.OnlyInCurrent, CaseRef{CaseID: r.ID, File: r.File, Line: r.Line})
	}
	for _, g := range c.GoldChangedList {
		b.Unpaired.GoldChanged = append(b.Unpaired.GoldChanged, GoldChanged{CaseID: g.ID, File: g.File, Line: g.Line, Before: g.Before, After: g.After})
	}
}

// pairedKeys are the registered measures a paired group has, in registry order.
func pairedKeys(g PairedGroup) []string {
	var keys []string
	for _, k := range metrics.CaseKeys {
		if _, ok := g.Metrics[k]; ok {
			keys = append(keys, k)
		}
	}
	return keys
}

// DifferenceConsequence is what a setting in which the baseline differs from
// this run means for the comparison, as the reports and the JSON "consequence"
// say it. A setting it does not know reads as the setting.
func DifferenceConsequence(s baseline.Setting) string {
	switch s {
	case baseline.SettingSchema:
		return "read as " + baseline.Schema + ": fields this build does not know are ignored"
	case baseline.SettingK:
		return "the measures are at different cutoffs: a Δ mixes the retrieval change with the cutoff change"
	case baseline.SettingKB:
		return "the knowledge base changed: a Δ may come from the cards rather than the retriever"
	case baseline.SettingFormat:
		return "a --cases-out file: k and the KB cannot be checked, flips show no top k and no rank drops are found"
	}
	return string(s)
}

// Package report renders the results of retrieval-gate for people (text,
// Markdown) and machines (JSON, JSONL). It holds no math and makes no decisions.
package report

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"

	"github.com/retrieval-gate/retrieval-gate/internal/gate"
)

// SchemaAggregates is the schema id of the `check --json` report.
const SchemaAggregates = "retrieval-gate/aggregates@1"

// IndicativeOnly labels every locale delta wherever it is shown.
const IndicativeOnly = "indicative only, not significance-tested"

// Float is a JSON number rounded to 6 decimals (deterministic text, no -0);
// NaN and infinities are null.
type Float float64

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) {
	return appendFloat(nil, float64(f)), nil
}

func appendFloat(dst []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(dst, "null"...)
	}
	v = math.Round(v*1e6) / 1e6
	if v == 0 {
		v = 0 // no "-0"
	}
	return strconv.AppendFloat(dst, v, 'f', -1, 64)
}

type obj = map[string]any

// WriteJSON writes the aggregates report: the contract's schema, keys sorted,
// floats rounded to 6 decimals, two-space indentation, a final newline.
// Additions to the contract's example: cases.precomputed; per group
// without_gold and per metric n; integrity.problems_total and
// integrity.unknown_retrieved; locale_deltas_note; a gate's reason when it fails.
func WriteJSON(w io.Writer, r *gate.Result) error {
	byType := obj{}
	for _, g := range r.ByType {
		byType[g.Name] = groupJSON(g)
	}
	byLocale := obj{}
	for _, g := range r.ByLocale {
		byLocale[g.Name] = groupJSON(g)
	}
	deltas := obj{}
	for _, ld := range r.Deltas {
		m := obj{}
		for _, d := range ld.Deltas {
			m[d.Key] = Float(d.Value)
		}
		deltas[ld.Locale] = m
	}
	note := IndicativeOnly
	if !r.ReferenceHasGold {
		note = "no deltas: " + noDeltas(r, strconv.Quote)
	}
	problems := make([]any, 0, len(r.Integrity.Problems))
	for _, p := range r.Integrity.Problems {
		problems = append(problems, obj{"file": p.File, "line": p.Line, "case_id": p.CaseID, "gold_id": p.GoldID, "reason": p.Reason})
	}
	examples := r.Integrity.Unknown.Examples
	if examples == nil {
		examples = []string{}
	}
	gates := make([]any, 0, len(r.Gates))
	for _, g := range r.Gates {
		o := obj{"name": g.Name, "status": g.Status}
		if g.IsFloor {
			o["value"] = Float(g.Value)
			if g.Floor.Set {
				o["threshold"] = Float(g.Floor.Value)
			} else {
				o["threshold"] = nil
			}
		}
		if g.Reason != "" {
			o["reason"] = g.Reason
		}
		gates = append(gates, o)
	}
	doc := obj{
		"schema": SchemaAggregates,
		"k":      r.K,
		"cases": obj{
			"total": r.Total, "with_gold": r.WithGold, "without_gold": r.WithoutGold,
			"precomputed": r.Precomputed,
		},
		"overall":            groupJSON(r.Overall),
		"by_type":            byType,
		"by_locale":          byLocale,
		"reference_locale":   r.ReferenceLocale,
		"locale_deltas":      deltas,
		"locale_deltas_note": note,
		"integrity": obj{
			"ok": r.Integrity.OK, "kb_cards": r.Integrity.KBCards,
			"problems": problems, "problems_total": r.Integrity.ProblemsTotal,
			"unknown_retrieved": obj{
				"entries": r.Integrity.Unknown.Entries, "cases": r.Integrity.Unknown.Cases,
				"examples": examples,
			},
		},
		"gates":   gates,
		"verdict": r.Verdict,
	}
	return writeIndentedJSON(w, doc)
}

func groupJSON(g gate.Group) obj {
	m := obj{}
	for _, x := range g.Metrics {
		m[x.Key] = obj{"mean": Float(x.Mean), "ci95": []Float{Float(x.CI95[0]), Float(x.CI95[1])}, "n": x.N}
	}
	return obj{"n": g.N, "without_gold": g.WithoutGold, "metrics": m}
}

// writeIndentedJSON writes v as JSON with two-space indentation, HTML characters
// unescaped and a final newline, in one Write.
func writeIndentedJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

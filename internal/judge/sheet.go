package judge

import (
	"bufio"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"io"
	"slices"

	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// Stratum is one locale of a human sample: its queries in the pool and how
// many were drawn.
type Stratum struct {
	Locale         string // "" for the queries without a locale
	Queries, Drawn int
}

// HumanSample is a random sample of the pool's queries for human labelling
// (judge --human-sample): every pooled document of a drawn query goes on the sheet.
type HumanSample struct {
	Seed    uint64
	Asked   int       // the N asked for
	Pool    int       // the pool's queries, the population drawn from
	Queries []string  // the drawn query ids, sorted
	Strata  []Stratum // by locale, sorted
	Pairs   []Pair    // the drawn queries' pairs, in pool order
}

// SampleQueries draws n of the pool's queries (all of them when the pool has
// fewer), stratified by locale with proportional allocation: each locale gets
// its share of n by the largest remainder (ties to the larger locale, then by
// name), and its queries are drawn uniformly without replacement by a seeded
// shuffle of their sorted ids. The same pool, n and seed give the same sample.
func SampleQueries(pairs []Pair, n int, seed uint64) *HumanSample {
	byLocale := map[string][]string{}
	seen := map[string]bool{}
	for _, p := range pairs {
		if !seen[p.QueryID] {
			seen[p.QueryID] = true
			byLocale[p.Locale] = append(byLocale[p.Locale], p.QueryID)
		}
	}
	total := len(seen)
	n = min(max(n, 0), total)
	hs := &HumanSample{Seed: seed, Asked: n, Pool: total}
	for loc, qs := range byLocale {
		slices.Sort(qs)
		hs.Strata = append(hs.Strata, Stratum{Locale: loc, Queries: len(qs)})
	}
	slices.SortFunc(hs.Strata, func(a, b Stratum) int { return cmp.Compare(a.Locale, b.Locale) })
	// Proportional allocation, largest remainder.
	type rem struct {
		i    int
		frac float64
	}
	var rs []rem
	given := 0
	for i := range hs.Strata {
		q := float64(n) * float64(hs.Strata[i].Queries) / float64(max(total, 1))
		hs.Strata[i].Drawn = int(q)
		given += int(q)
		rs = append(rs, rem{i, q - float64(int(q))})
	}
	slices.SortStableFunc(rs, func(a, b rem) int {
		if c := cmp.Compare(b.frac, a.frac); c != 0 {
			return c
		}
		return cmp.Compare(hs.Strata[b.i].Queries, hs.Strata[a.i].Queries)
	})
	for k := 0; given < n; k++ {
		hs.Strata[rs[k].i].Drawn++
		given++
	}
	r := metrics.NewRand(seed)
	drawn := map[string]bool{}
	for _, st := range hs.Strata {
		qs := slices.Clone(byLocale[st.Locale])
		r.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
		for _, q := range qs[:st.Drawn] {
			drawn[q] = true
			hs.Queries = append(hs.Queries, q)
		}
	}
	slices.Sort(hs.Queries)
	for _, p := range pairs {
		if drawn[p.QueryID] {
			hs.Pairs = append(hs.Pairs, p)
		}
	}
	return hs
}

// WriteSheetCSV writes the labelling sheet as CSV: a header (query_id, locale,
// query, doc_id, document, grade), then one row per pair with an empty grade.
// A cell a spreadsheet would run as a formula gets a leading apostrophe
// (labelfile.SheetCell; the reader strips it from the ids).
func WriteSheetCSV(w io.Writer, hs *HumanSample) error {
	bw := bufio.NewWriter(w)
	cw := csv.NewWriter(bw)
	if err := cw.Write(labelfile.SheetColumns); err != nil {
		return err
	}
	c := labelfile.SheetCell
	for _, p := range hs.Pairs {
		if err := cw.Write([]string{c(p.QueryID), c(p.Locale), c(p.Query), c(p.DocID), c(p.Document), ""}); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
}

type sheetRecord struct {
	QueryID  string `json:"query_id"`
	Locale   string `json:"locale"`
	Query    string `json:"query"`
	DocID    string `json:"doc_id"`
	Document string `json:"document"`
	Grade    *int   `json:"grade"`
}

// WriteSheetJSONL writes the labelling sheet as JSONL: {"query_id", "locale",
// "query", "doc_id", "document", "grade": null} per pair.
func WriteSheetJSONL(w io.Writer, hs *HumanSample) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, p := range hs.Pairs {
		if err := enc.Encode(sheetRecord{QueryID: p.QueryID, Locale: p.Locale, Query: p.Query, DocID: p.DocID, Document: p.Document}); err != nil {
			return err
		}
	}
	return bw.Flush()
}

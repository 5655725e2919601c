package main

import (
	"bufio"
	"fmt"
	"slices"
	"strconv"

	"github.com/parquet-go/parquet-go"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

const kbCards = 3000

var locales = []string{"en", "es-419", "pt-BR"}

// checkKB writes the knowledge base of checkCases.
func checkKB(w *bufio.Writer) error {
	for i := range kbCards {
		if _, err := fmt.Fprintf(w, `{"id": "card-%d", "locale": %q, "title": "Card %d", "text": "Text of card %d."}`+"\n", i, locales[i%3], i, i); err != nil {
			return err
		}
	}
	return nil
}

// benchCase is one generated case; benchEntry one retrieved entry.
type benchCase struct {
	ID        string       `parquet:"id"`
	Locale    string       `parquet:"locale"`
	Type      string       `parquet:"type"`
	Query     string       `parquet:"query"`
	Gold      []string     `parquet:"must_cite_one_of,optional,list"`
	Retrieved []benchEntry `parquet:"retrieved,list"`
}

type benchEntry struct {
	ID       string  `parquet:"id"`
	ParentID string  `parquet:"parent_id"`
	Score    float64 `parquet:"score"`
}

// benchCaseDict is benchCase with its repeated strings dictionary-encoded
// (locale, type and the retrieved ids: what pyarrow, Spark and DuckDB keep
// in dictionaries; the case ids and queries, each different, they write
// plain once a dictionary outgrows its page).
type benchCaseDict struct {
	ID        string           `parquet:"id"`
	Locale    string           `parquet:"locale,dict"`
	Type      string           `parquet:"type,dict"`
	Query     string           `parquet:"query"`
	Gold      []string         `parquet:"must_cite_one_of,optional,list"`
	Retrieved []benchEntryDict `parquet:"retrieved,list"`
}

type benchEntryDict struct {
	ID       string  `parquet:"id,dict"`
	ParentID string  `parquet:"parent_id,dict"`
	Score    float64 `parquet:"score"`
}

// genCases makes n cases of 10 retrieved entries each: 3 locales, every
// fifth adversarial, a tenth without gold, a quarter with two gold ids, a
// quarter of the entries the gold card (seed 42). fn gets each case in turn
// (the same *benchCase, refilled); a score is the float its 3-decimal text
// reads as.
func genCases(n int, fn func(c *benchCase, golds int, scores *[10]float64, texts *[10][]byte) error) error {
	r := metrics.NewRand(42)
	var c benchCase
	var scores [10]float64
	var texts [10][]byte
	c.Retrieved = make([]benchEntry, 10)
	gold := make([]string, 0, 2)
	for i := range n {
		c.ID = "case-" + strconv.Itoa(i)
		c.Locale = locales[i%3]
		c.Type = "golden"
		if i%5 == 4 {
			c.Type = "adversarial"
		}
		c.Query = "How do I do thing number " + strconv.Itoa(i%977) + " in the product?"
		g := r.IntN(kbCards)
		golds := 0
		gold = gold[:0]
		if i%10 != 9 { // 10% without gold
			gold = append(gold, "card-"+strconv.Itoa(g))
			if i%4 == 0 {
				gold = append(gold, "card-"+strconv.Itoa((g+1)%kbCards))
			}
			golds = len(gold)
		}
		c.Gold = gold
		if golds == 0 {
			c.Gold = nil
		}
		score := 0.95
		for j := range 10 {
			card := r.IntN(kbCards)
			if r.IntN(4) == 0 {
				card = g
			}
			score -= 0.01 + 0.02*r.Float64()
			texts[j] = strconv.AppendFloat(texts[j][:0], score, 'f', 3, 64)
			scores[j], _ = strconv.ParseFloat(string(texts[j]), 64)
			c.Retrieved[j] = benchEntry{ID: "card-" + strconv.Itoa(card) + "#c" + strconv.Itoa(j%4), ParentID: "card-" + strconv.Itoa(card), Score: scores[j]}
		}
		if err := fn(&c, golds, &scores, &texts); err != nil {
			return err
		}
	}
	return nil
}

// checkCases writes genCases's n cases as JSONL.
func checkCases(w *bufio.Writer, n int) error {
	var line []byte
	return genCases(n, func(c *benchCase, golds int, _ *[10]float64, texts *[10][]byte) error {
		line = append(line[:0], `{"id": "`...)
		line = append(line, c.ID...)
		line = append(line, `", "locale": "`...)
		line = append(line, c.Locale...)
		line = append(line, `", "type": "`...)
		line = append(line, c.Type...)
		line = append(line, `", "query": "`...)
		line = append(line, c.Query...)
		line = append(line, `"`...)
		if golds > 0 {
			line = append(line, `, "must_cite_one_of": [`...)
			for j, g := range c.Gold {
				if j > 0 {
					line = append(line, `, `...)
				}
				line = append(line, '"')
				line = append(line, g...)
				line = append(line, '"')
			}
			line = append(line, `]`...)
		}
		line = append(line, `, "retrieved": [`...)
		for j, e := range c.Retrieved {
			if j > 0 {
				line = append(line, ", "...)
			}
			line = append(line, `{"id": "`...)
			line = append(line, e.ID...)
			line = append(line, `", "parent_id": "`...)
			line = append(line, e.ParentID...)
			line = append(line, `", "score": `...)
			line = append(line, texts[j]...)
			line = append(line, `}`...)
		}
		line = append(line, "]}\n"...)
		_, err := w.Write(line)
		return err
	})
}

// checkCasesParquet writes genCases's n cases as a Parquet file: the columns
// of the JSONL, must_cite_one_of null where the JSONL leaves it out, Snappy
// pages (Spark's default codec) in row groups of 65,536 rows; with dict, the
// repeated strings in dictionaries (benchCaseDict).
func checkCasesParquet(w *bufio.Writer, n int, dict bool) error {
	if dict {
		pw := parquet.NewGenericWriter[benchCaseDict](w, parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(1<<16))
		return writeCasesParquet(pw, n, func(c *benchCase) benchCaseDict {
			d := benchCaseDict{ID: c.ID, Locale: c.Locale, Type: c.Type, Query: c.Query, Gold: slices.Clone(c.Gold)}
			for _, e := range c.Retrieved {
				d.Retrieved = append(d.Retrieved, benchEntryDict(e))
			}
			return d
		})
	}
	pw := parquet.NewGenericWriter[benchCase](w, parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(1<<16))
	return writeCasesParquet(pw, n, func(c *benchCase) benchCase {
		cc := *c
		cc.Gold = slices.Clone(c.Gold)
		cc.Retrieved = slices.Clone(c.Retrieved)
		return cc
	})
}

// writeCasesParquet writes genCases's n cases to pw, each as row makes it.
func writeCasesParquet[R any](pw *parquet.GenericWriter[R], n int, row func(*benchCase) R) error {
	batch := make([]R, 0, 1024)
	flush := func() error {
		_, err := pw.Write(batch)
		batch = batch[:0]
		return err
	}
	err := genCases(n, func(c *benchCase, _ int, _ *[10]float64, _ *[10][]byte) error {
		batch = append(batch, row(c))
		if len(batch) == cap(batch) {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err == nil {
		err = pw.Close()
	}
	return err
}

// lock is calibrate's lock for labels (internal/calibrate's benchLock).
const lock = `{"dimensions": {"groundedness": {"construct": "support", "gated": true},
 "faithfulness": {"construct": "contradiction-only", "gated": true}},
 "bins": [0.34, 0.67], "kappa_weighting": "quadratic", "min_kappa": 0.6}
`

// labels writes the human or judge labels of n cases × 2 dimensions, one
// dimension after the other (the files of BENCHMARKS.md's calibrate rows):
// human score (i mod 3)/2, the judge's differing when i mod 4 = 3. Case ids
// are case-%07d when padded, else c%d.
func labels(w *bufio.Writer, judge bool, n int, padded bool) error {
	dims := [2][2]string{{"groundedness", "support"}, {"faithfulness", "contradiction-only"}}
	var line []byte
	for _, d := range dims {
		for i := range n {
			s := i % 3
			if judge && i%4 == 3 {
				s = (i + 1) % 3
			}
			line = append(line[:0], `{"case_id": "`...)
			if padded {
				line = append(line, "case-"...)
				line = appendPadded(line, i, 7)
			} else {
				line = append(line, 'c')
				line = strconv.AppendInt(line, int64(i), 10)
			}
			line = append(line, `", "dimension": "`...)
			line = append(line, d[0]...)
			line = append(line, `", "score": `...)
			line = append(line, [3]string{"0", "0.5", "1"}[s]...)
			line = append(line, `, "construct": "`...)
			line = append(line, d[1]...)
			if judge {
				line = append(line, `", "judged_at": "2026-10-01T09:00:00Z"}`+"\n"...)
			} else {
				line = append(line, `", "labeled_at": "2026-09-01T09:00:00Z"}`+"\n"...)
			}
			if _, err := w.Write(line); err != nil {
				return err
			}
		}
	}
	return nil
}

// appendPadded appends i in decimal, zero-padded to width digits.
func appendPadded(b []byte, i, width int) []byte {
	s := strconv.Itoa(i)
	for range width - len(s) {
		b = append(b, '0')
	}
	return append(b, s...)
}

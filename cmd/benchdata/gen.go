package main

import (
	"bufio"
	"fmt"
	"strconv"

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

// checkCases writes n cases of 10 retrieved entries each: 3 locales, every
// fifth adversarial, a tenth without gold, a quarter with two gold ids, a
// quarter of the entries the gold card (seed 42).
func checkCases(w *bufio.Writer, n int) error {
	r := metrics.NewRand(42)
	var line []byte
	for i := range n {
		loc := locales[i%3]
		typ := "golden"
		if i%5 == 4 {
			typ = "adversarial"
		}
		line = append(line[:0], `{"id": "case-`...)
		line = strconv.AppendInt(line, int64(i), 10)
		line = append(line, `", "locale": "`...)
		line = append(line, loc...)
		line = append(line, `", "type": "`...)
		line = append(line, typ...)
		line = append(line, `", "query": "How do I do thing number `...)
		line = strconv.AppendInt(line, int64(i%977), 10)
		line = append(line, ` in the product?"`...)
		gold := r.IntN(kbCards)
		if i%10 != 9 { // 10% without gold
			line = append(line, `, "must_cite_one_of": ["card-`...)
			line = strconv.AppendInt(line, int64(gold), 10)
			line = append(line, `"`...)
			if i%4 == 0 {
				line = append(line, `, "card-`...)
				line = strconv.AppendInt(line, int64((gold+1)%kbCards), 10)
				line = append(line, `"`...)
			}
			line = append(line, `]`...)
		}
		line = append(line, `, "retrieved": [`...)
		score := 0.95
		for j := range 10 {
			if j > 0 {
				line = append(line, ", "...)
			}
			card := r.IntN(kbCards)
			if r.IntN(4) == 0 {
				card = gold
			}
			line = append(line, `{"id": "card-`...)
			line = strconv.AppendInt(line, int64(card), 10)
			line = append(line, `#c`...)
			line = strconv.AppendInt(line, int64(j%4), 10)
			line = append(line, `", "parent_id": "card-`...)
			line = strconv.AppendInt(line, int64(card), 10)
			line = append(line, `", "score": `...)
			score -= 0.01 + 0.02*r.Float64()
			line = strconv.AppendFloat(line, score, 'f', 3, 64)
			line = append(line, `}`...)
		}
		line = append(line, "]}\n"...)
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
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

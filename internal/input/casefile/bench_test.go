package casefile

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/valyala/fastjson"
)

var benchCases = flag.Int("bench-cases", 1_000_000, "number of cases in the generated BenchmarkMapCases file")

var benchLocales = []string{"en", "es-419", "pt-BR"}

// writeBenchCases writes n realistic cases to w, deterministically: 1–3 gold
// ids, 10 retrieved chunks {id, parent_id, score} and, with withText, a
// ~100-character text per chunk (about 2.1 kB a case); without text, in compact
// JSON (about 0.7 kB a case, the size of the 755 MB file of
// shared/notes/performance-measured-here.md).
func writeBenchCases(w *bufio.Writer, n int, withText bool) error {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("how do I reset my password account billing invoice refund two factor login error " +
		"export data delete team member plan upgrade downgrade api key rotate webhook retry limit quota")
	text := func(k int) string {
		var sb strings.Builder
		for sb.Len() < k {
			if sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(words[rng.IntN(len(words))])
		}
		return sb.String()
	}
	for i := range n {
		loc := benchLocales[i%len(benchLocales)]
		typ := "golden"
		if i%7 == 0 {
			typ = "adversarial"
		}
		sep := ", "
		if !withText {
			sep = ","
		}
		fmt.Fprintf(w, `{"id":"%s-%s-%07d","locale":"%s","type":"%s","query":%q,"must_cite_one_of":[`, loc, typ, i, loc, typ, text(40)+"?")
		for g := range 1 + rng.IntN(3) {
			if g > 0 {
				_, _ = w.WriteString(sep) // bufio's error is sticky: the checked write ending the case reports it
			}
			fmt.Fprintf(w, `"%s-card-%04d"`, loc, rng.IntN(5000))
		}
		_, _ = w.WriteString(`],"retrieved":[`) // sticky, as above
		for r := range 10 {
			if r > 0 {
				_, _ = w.WriteString(sep) // sticky, as above
			}
			card := fmt.Sprintf("%s-card-%04d", loc, rng.IntN(5000))
			score := 1 - float64(r)/20 - rng.Float64()/40
			if withText {
				fmt.Fprintf(w, `{"id": "%s#c%d", "parent_id": "%s", "score": %.4f, "text": %q}`, card, rng.IntN(4), card, score, text(100))
			} else {
				fmt.Fprintf(w, `{"id":"%s#c%d","parent_id":"%s","score":%.4f}`, card, rng.IntN(4), card, score)
			}
		}
		if _, err := w.WriteString("]}\n"); err != nil {
			return err
		}
	}
	return w.Flush()
}

// benchCasesFile returns a generated cases file of n cases, cached under
// os.TempDir() across runs.
func benchCasesFile(b *testing.B, n int, withText bool) string {
	b.Helper()
	shape := "compact"
	if withText {
		shape = "text"
	}
	path := filepath.Join(os.TempDir(), fmt.Sprintf("retrieval-gate-bench-cases-v2-%s-%d.jsonl", shape, n))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	tmp, err := os.CreateTemp(os.TempDir(), "retrieval-gate-bench-*.tmp")
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(tmp.Name())
	if err := writeBenchCases(bufio.NewWriterSize(tmp, 1<<20), n, withText); err != nil {
		b.Fatal(err)
	}
	if err := tmp.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkMapCases decodes generated files of -bench-cases cases (default
// 1,000,000 × 10 retrieved: "text" about 2.1 GB, "compact" about 0.7 GB) with 1
// and 2 workers; work computes hit@5, as check does.
func BenchmarkMapCases(b *testing.B) {
	for _, withText := range []bool{true, false} {
		path := benchCasesFile(b, *benchCases, withText)
		st, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		shape := "compact"
		if withText {
			shape = "text"
		}
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("shape=%s/workers=%d", shape, workers), func(b *testing.B) {
				b.SetBytes(st.Size())
				b.ReportAllocs()
				for b.Loop() {
					f, err := os.Open(path)
					if err != nil {
						b.Fatal(err)
					}
					n, hits := 0, 0
					err = MapCases(context.Background(), f, path, workers, func(c *Case) (bool, error) {
						for _, r := range c.Retrieved[:min(5, len(c.Retrieved))] {
							for _, g := range c.Gold {
								if r.Identity() == g {
									return true, nil
								}
							}
						}
						return false, nil
					}, func(hit bool) error {
						n++
						if hit {
							hits++
						}
						return nil
					})
					f.Close()
					if err != nil {
						b.Fatal(err)
					}
					if n != *benchCases {
						b.Fatalf("got %d cases, want %d", n, *benchCases)
					}
				}
				b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/file")
			})
		}
	}
}

// BenchmarkStreamCases is the single-goroutine reader on the same file.
func BenchmarkStreamCases(b *testing.B) {
	path := benchCasesFile(b, *benchCases, true)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		err = StreamCases(context.Background(), f, path, func(c *Case) error { n++; return nil })
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseCase decodes one compact case line (10 retrieved) with the
// scanner; "fastjson-parse-only" only builds fastjson's tree of the same line,
// without extracting anything: a yardstick that moves with the machine's load.
func BenchmarkParseCase(b *testing.B) {
	var buf strings.Builder
	w := bufio.NewWriter(&buf)
	if err := writeBenchCases(w, 1, false); err != nil {
		b.Fatal(err)
	}
	line := []byte(strings.TrimSpace(buf.String()))
	b.Run("scanner", func(b *testing.B) {
		var p CaseParser
		var c Case
		b.SetBytes(int64(len(line)))
		b.ReportAllocs()
		for b.Loop() {
			if err := p.Parse(line, "f", 1, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The line shape of check's benchmark file (spaces after ':' and ',').
	checkLine := []byte(`{"id": "case-123456", "locale": "es-419", "type": "adversarial", "query": "How do I do thing number 371 in the product?", ` +
		`"must_cite_one_of": ["card-2411", "card-2412"], "retrieved": [{"id": "card-17#c0", "parent_id": "card-17", "score": 0.923}, ` +
		`{"id": "card-2411#c1", "parent_id": "card-2411", "score": 0.905}, {"id": "card-977#c2", "parent_id": "card-977", "score": 0.883}, ` +
		`{"id": "card-1500#c3", "parent_id": "card-1500", "score": 0.861}, {"id": "card-2#c0", "parent_id": "card-2", "score": 0.848}, ` +
		`{"id": "card-2411#c1", "parent_id": "card-2411", "score": 0.832}, {"id": "card-2999#c2", "parent_id": "card-2999", "score": 0.811}, ` +
		`{"id": "card-640#c3", "parent_id": "card-640", "score": 0.797}, {"id": "card-1024#c0", "parent_id": "card-1024", "score": 0.776}, ` +
		`{"id": "card-88#c1", "parent_id": "card-88", "score": 0.759}]}`)
	b.Run("scanner-check-shape", func(b *testing.B) {
		var p CaseParser
		var c Case
		b.SetBytes(int64(len(checkLine)))
		b.ReportAllocs()
		for b.Loop() {
			if err := p.Parse(checkLine, "f", 1, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The same line as check decodes it (StringsInLine: parseFast; NoScores).
	b.Run("fast-check-shape", func(b *testing.B) {
		p := CaseParser{StringsInLine: true, NoScores: true}
		var c Case
		b.SetBytes(int64(len(checkLine)))
		b.ReportAllocs()
		for b.Loop() {
			if err := p.Parse(checkLine, "f", 1, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fastjson-parse-only", func(b *testing.B) {
		var p fastjson.Parser
		b.SetBytes(int64(len(line)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.ParseBytes(line); err != nil {
				b.Fatal(err)
			}
		}
	})
}

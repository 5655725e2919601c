package check

import (
	"bufio"
	"os"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
)

// BenchmarkWorker is a check worker's work per case on the benchmark's own
// file: the first 50,000 lines of RG_BENCH_CASES (41 MB of
// `benchdata check-cases`, more than the caches hold) decoded and scored in
// turn against the KB RG_BENCH_KB (`benchdata check-kb`), with check's
// decoding options. "parse" decodes only, "parse+keys" also looks up the
// retrieved identities in the KB (KB.Keys), "parse+score" is the worker's
// whole work (gate.Scorer.ScoreInto, no missed case kept). Skipped without
// the files (scripts/bench-near-limit generates them).
func BenchmarkWorker(b *testing.B) {
	cf, kf := os.Getenv("RG_BENCH_CASES"), os.Getenv("RG_BENCH_KB")
	if cf == "" || kf == "" {
		b.Skip("RG_BENCH_CASES and RG_BENCH_KB name no files")
	}
	kb, err := kbfile.Load(b.Context(), kf)
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(cf)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var lines [][]byte
	for len(lines) < 50000 && sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	if len(lines) == 0 {
		b.Fatal("no lines")
	}
	run := func(b *testing.B, per func(c *casefile.Case)) {
		p := casefile.CaseParser{StringsInLine: true, NoScores: true}
		var c casefile.Case
		for i := 0; b.Loop(); i++ {
			if err := p.Parse(lines[i%len(lines)], "f", i+1, &c); err != nil {
				b.Fatal(err)
			}
			per(&c)
		}
	}
	b.Run("parse", func(b *testing.B) { run(b, func(*casefile.Case) {}) })
	b.Run("parse+keys", func(b *testing.B) {
		ids, keys := make([]string, 0, 64), make([]uint64, 64)
		run(b, func(c *casefile.Case) {
			ids = ids[:0]
			for i := range c.Retrieved {
				id := c.Retrieved[i].ParentID
				if id == "" {
					id = c.Retrieved[i].ID
				}
				ids = append(ids, id)
			}
			kb.Keys(ids, keys[:len(ids)])
		})
	})
	b.Run("parse+score", func(b *testing.B) {
		s := &gate.Scorer{KB: kb, K: 5, KeepMissed: func() bool { return false }}
		var r gate.CaseResult
		run(b, func(c *casefile.Case) {
			if err := s.ScoreInto(c, &r); err != nil {
				b.Fatal(err)
			}
		})
	})
}

package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/unixtest"
)

// benchCases is the size of the generated benchmark file.
const benchCases = 1_000_000

// benchFiles returns a generated cases file of benchCases cases × 10 retrieved
// entries and its KB, created once and cached in $RG_BENCH_DIR (default: the
// system temp directory) across runs.
func benchFiles(tb testing.TB) (cases, kb string) {
	tb.Helper()
	dir := os.Getenv("RG_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "retrieval-gate-bench")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	cases = filepath.Join(dir, fmt.Sprintf("check-cases-%d-v1.jsonl", benchCases))
	kb = filepath.Join(dir, "check-kb-v1.jsonl")
	if _, err := os.Stat(cases); err == nil {
		if _, err := os.Stat(kb); err == nil {
			return cases, kb
		}
	}
	const cards = 3000
	locales := []string{"en", "es-419", "pt-BR"}
	var kbBuf bytes.Buffer
	for i := range cards {
		fmt.Fprintf(&kbBuf, `{"id": "card-%d", "locale": %q, "title": "Card %d", "text": "Text of card %d."}`+"\n", i, locales[i%3], i, i)
	}
	if err := os.WriteFile(kb, kbBuf.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	tmp := cases + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	r := metrics.NewRand(42)
	var line []byte
	for i := range benchCases {
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
		gold := r.IntN(cards)
		if i%10 != 9 { // 10% without gold
			line = append(line, `, "must_cite_one_of": ["card-`...)
			line = strconv.AppendInt(line, int64(gold), 10)
			line = append(line, `"`...)
			if i%4 == 0 {
				line = append(line, `, "card-`...)
				line = strconv.AppendInt(line, int64((gold+1)%cards), 10)
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
			card := r.IntN(cards)
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
			tb.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, cases); err != nil {
		tb.Fatal(err)
	}
	return cases, kb
}

func benchEnv() *Env {
	return &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
}

// BenchmarkCheck runs the whole check pipeline (KB load, parallel decoding and
// scoring, aggregation with bootstrap CIs, JSON, Markdown and --cases-out) on
// 1,000,000 cases × 10 retrieved entries, then reports the peak RSS of the
// same run in a fresh process (peak-RSS-MiB).
//
//	go test ./cli -run '^$' -bench BenchmarkCheck -benchtime 3x
func BenchmarkCheck(b *testing.B) {
	cases, kb := benchFiles(b)
	out := b.TempDir()
	args := []string{"--cases", cases, "--kb", kb, "--json", filepath.Join(out, "a.json"),
		"--markdown", filepath.Join(out, "a.md"), "--cases-out", filepath.Join(out, "per-case.jsonl")}
	b.ResetTimer()
	for b.Loop() {
		if err := NewCmdCheck(NewFactory(benchEnv()), nil).Run(context.Background(), args); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()

	// Peak RSS of one run in its own process (this test binary, re-entered).
	cmd := exec.Command(os.Args[0], "-test.run=^TestCheckSubprocess$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), "RG_CHECK_SUBPROCESS="+strings.Join(args, "\x1f"))
	if outb, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("subprocess: %v\n%s", err, outb)
	}
	if kib, ok := unixtest.MaxRSSKiB(cmd.ProcessState); ok {
		b.ReportMetric(float64(kib)/1024, "peak-RSS-MiB")
	}
}

// TestCheckSubprocess runs check with the arguments in $RG_CHECK_SUBPROCESS
// (separated by \x1f); BenchmarkCheck uses it to measure a run's peak RSS.
func TestCheckSubprocess(t *testing.T) {
	v := os.Getenv("RG_CHECK_SUBPROCESS")
	if v == "" {
		t.Skip("only run by BenchmarkCheck")
	}
	if err := NewCmdCheck(NewFactory(benchEnv()), nil).Run(context.Background(), strings.Split(v, "\x1f")); err != nil {
		t.Fatal(err)
	}
}

package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkCheckBaseline is BenchmarkCheck's run (1,000,000 cases, all reports)
// compared with a baseline of the same 1,000,000 cases (written once with
// --write-baseline and cached next to the cases file): loading and joining the
// baseline, the paired statistics of every group and measure, and the vs-base
// section in every report. Its ratio to BenchmarkCheck is the cost of the
// comparison (the budget is 2.5×).
//
//	go test ./internal/cli -run '^$' -bench 'BenchmarkCheck(Baseline)?$' -benchtime 3x
func BenchmarkCheckBaseline(b *testing.B) {
	cases, kb := benchFiles(b)
	base := filepath.Join(filepath.Dir(cases), "check-baseline-1000000-v1.jsonl.gz")
	if _, err := os.Stat(base); err != nil {
		tmp := base + ".tmp.jsonl.gz"
		if err := NewCmdCheck(NewFactory(benchEnv()), nil).Run(context.Background(), []string{"--cases", cases, "--kb", kb, "--write-baseline", tmp}); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(tmp, base); err != nil {
			b.Fatal(err)
		}
	}
	out := b.TempDir()
	args := []string{"--cases", cases, "--kb", kb, "--baseline", base, "--json", filepath.Join(out, "a.json"),
		"--markdown", filepath.Join(out, "a.md"), "--cases-out", filepath.Join(out, "per-case.jsonl")}
	b.ResetTimer()
	for b.Loop() {
		if err := NewCmdCheck(NewFactory(benchEnv()), nil).Run(context.Background(), args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckWriteBaseline is BenchmarkCheck's run that also writes --write-baseline.
func BenchmarkCheckWriteBaseline(b *testing.B) {
	cases, kb := benchFiles(b)
	out := b.TempDir()
	args := []string{"--cases", cases, "--kb", kb, "--json", filepath.Join(out, "a.json"),
		"--markdown", filepath.Join(out, "a.md"), "--cases-out", filepath.Join(out, "per-case.jsonl"),
		"--write-baseline", filepath.Join(out, "b.jsonl.gz")}
	b.ResetTimer()
	for b.Loop() {
		if err := NewCmdCheck(NewFactory(benchEnv()), nil).Run(context.Background(), args); err != nil {
			b.Fatal(err)
		}
	}
}

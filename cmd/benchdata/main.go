// Command benchdata writes the generated inputs of the benchmarks to standard
// output, deterministically (a fixed seed): the same arguments give the same
// bytes on every machine, so scripts/bench-near-limit and anyone repeating a
// row of BENCHMARKS.md read the same files.
//
//	go run ./cmd/benchdata check-cases N   # N cases × 10 retrieved entries (the check benchmark's file)
//	go run ./cmd/benchdata check-cases-parquet N  # the same cases as one Parquet file (Snappy, row groups of 65,536)
//	go run ./cmd/benchdata check-cases-parquet-dict N  # the same, the repeated strings dictionary-encoded
//	go run ./cmd/benchdata check-kb        # its knowledge base, 3,000 cards
//	go run ./cmd/benchdata labels human|judge N padded|plain
//	go run ./cmd/benchdata lock            # the calibrate lock of the labels
//
// check-cases 1000000 is byte for byte the file internal/cli's BenchmarkCheck
// generates (check-cases-1000000-v1.jsonl). labels writes N cases × 2
// dimensions, the judge disagreeing on one case in four; padded case ids
// (case-0000012) sort in file order, plain ones (c12) do not (c10 < c2).
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run writes what args ask for to stdout; the exit code is 2 on bad usage.
func run(args []string, stdout, stderr io.Writer) int {
	w := bufio.NewWriterSize(stdout, 1<<20)
	err := write(w, args)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fmt.Fprintln(stderr, "benchdata:", err)
		return 2
	}
	return 0
}

func write(w *bufio.Writer, args []string) error {
	count := func(i int) (int, error) {
		if len(args) <= i {
			return 0, fmt.Errorf("%s: missing N", args[0])
		}
		n, err := strconv.Atoi(args[i])
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%s: N must be a count, got %q", args[0], args[i])
		}
		return n, nil
	}
	if len(args) == 0 {
		return fmt.Errorf("usage: benchdata check-cases N | check-cases-parquet N | check-cases-parquet-dict N | check-kb | labels human|judge N padded|plain | lock")
	}
	switch args[0] {
	case "check-cases":
		n, err := count(1)
		if err != nil {
			return err
		}
		return checkCases(w, n)
	case "check-cases-parquet":
		n, err := count(1)
		if err != nil {
			return err
		}
		return checkCasesParquet(w, n, false)
	case "check-cases-parquet-dict":
		n, err := count(1)
		if err != nil {
			return err
		}
		return checkCasesParquet(w, n, true)
	case "check-kb":
		return checkKB(w)
	case "labels":
		if len(args) != 4 || (args[1] != "human" && args[1] != "judge") || (args[3] != "padded" && args[3] != "plain") {
			return fmt.Errorf("usage: benchdata labels human|judge N padded|plain")
		}
		n, err := count(2)
		if err != nil {
			return err
		}
		return labels(w, args[1] == "judge", n, args[3] == "padded")
	case "lock":
		_, err := w.WriteString(lock)
		return err
	}
	return fmt.Errorf("unknown data %q", args[0])
}

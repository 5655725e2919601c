package llmtest

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
)

// URLToken is replaced by the server's URL in the command's arguments.
const URLToken = "{{LLM_URL}}" //nolint:gosec // G101: a placeholder for the server URL, not a credential

// Main is a command for end-to-end scripts (register it with testscript):
//
//	fake-llm [-kb PATH -queries FILE -qrels FILE] [-key K] [-delay D]
//	         [-rate-limit-every N] [-retry-after S] [-fail STATUS]... [-no-schema]
//	         [-no-usage] -- command args...
//
// It starts a fake chat server whose hidden relevance table is -qrels (TREC
// "qid 0 docid rel") over the query texts of -queries and the documents of -kb
// (as judge.DocumentText shows them), runs the command with every {{LLM_URL}}
// in its arguments replaced by the server's URL, prints "fake-llm: N requests,
// M answered" on stderr and exits with the command's exit code.
func Main() {
	os.Exit(run(os.Args[1:]))
}

type statuses []int

func (s *statuses) String() string { return fmt.Sprint(*s) }
func (s *statuses) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 400 {
		return errors.New("want an HTTP status ≥ 400")
	}
	*s = append(*s, n)
	return nil
}

func run(args []string) int {
	fs := flag.NewFlagSet("fake-llm", flag.ContinueOnError)
	kb := fs.String("kb", "", "knowledge base of the hidden table's documents")
	queries := fs.String("queries", "", "query texts of the hidden table (cases JSONL or TSV)")
	qrels := fs.String("qrels", "", "the hidden relevance table, TREC qrels")
	var opt Options
	fs.StringVar(&opt.APIKey, "key", "", "the accepted bearer token (empty: any)")
	fs.DurationVar(&opt.Delay, "delay", 0, "time taken by each answer")
	fs.IntVar(&opt.RateLimitEvery, "rate-limit-every", 0, "answer every Nth request with 429")
	fs.IntVar(&opt.RetryAfter, "retry-after", 0, "Retry-After seconds of a 429")
	var fails statuses
	fs.Var(&fails, "fail", "serve STATUS to the next request (repeatable)")
	fs.BoolVar(&opt.NoSchema, "no-schema", false, "reject response_format json_schema (400)")
	fs.IntVar(&opt.Batch.PollsPerStatus, "batch-polls", 1, "Batch API: retrievals a batch spends in each status")
	fs.StringVar(&opt.Batch.End, "batch-end", "", "Batch API: end a batch expired, cancelled or failed")
	fs.IntVar(&opt.Batch.Answer, "batch-answer", 0, "Batch API: requests answered before an expired or cancelled end")
	fs.BoolVar(&opt.NoUsage, "no-usage", false, "omit usage from answers")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "fake-llm: missing command after --")
		return 2
	}
	opt.FailFirst = fails
	if *qrels != "" {
		g, err := hiddenTable(*kb, *queries, *qrels)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fake-llm: %v\n", err)
			return 2
		}
		opt.Grades = g
	}
	srv := New(opt)
	defer srv.Close()
	cargs := make([]string, fs.NArg())
	for i, a := range fs.Args() {
		cargs[i] = strings.ReplaceAll(a, URLToken, srv.URL)
	}
	cmd := exec.Command(cargs[0], cargs[1:]...) //nolint:gosec // G204: runs the command the test script names, as an argument vector (no shell)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			fmt.Fprintf(os.Stderr, "fake-llm: %v\n", err)
			return 2
		}
		code = ee.ExitCode()
	}
	fmt.Fprintf(os.Stderr, "fake-llm: %d requests, %d answered\n", srv.Requests(), srv.Answered())
	return code
}

// hiddenTable maps query text -> document text -> grade.
func hiddenTable(kbPath, queriesPath, qrelsPath string) (map[string]map[string]int, error) {
	if kbPath == "" || queriesPath == "" {
		return nil, errors.New("-qrels needs -kb and -queries")
	}
	kb, err := kbfile.Load(context.Background(), kbPath)
	if err != nil {
		return nil, err
	}
	qf, err := os.Open(queriesPath)
	if err != nil {
		return nil, err
	}
	defer qf.Close()
	qs, err := judge.ReadQueries(context.Background(), qf, queriesPath)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(qrelsPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]map[string]int{}
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		fl := strings.Fields(sc.Text())
		if len(fl) == 0 {
			continue
		}
		if len(fl) != 4 {
			return nil, fmt.Errorf("%s:%d: want \"qid 0 docid rel\"", qrelsPath, line)
		}
		rel, err := strconv.Atoi(fl[3])
		q, okq := qs[fl[0]]
		card, okd := kb.Card(fl[2])
		if err != nil || !okq || !okd {
			return nil, fmt.Errorf("%s:%d: unknown query or card, or bad grade", qrelsPath, line)
		}
		if out[q.Text] == nil {
			out[q.Text] = map[string]int{}
		}
		out[q.Text][judge.DocumentText(card)] = rel
	}
	return out, sc.Err()
}

package compare

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
)

// The queries of a comparison (compare --queries FILE, evaluate's cases): what
// a query id stands for, read from the cases JSONL that generate writes and
// check reads (or a queries TSV, as judge --queries reads). The reports show a query's text beside its id (best and worst
// queries); its cluster counts as --clusters does (the statistics are computed
// over clusters); its locale is carried for the estimates per locale.

// Query is what the cases file says of one query: its text, its locale and its
// cluster ("" where the case has none).
type Query struct {
	Text, Locale, Cluster string
}

// Queries maps a query id (a case's id) to its Query.
type Queries map[string]Query

// ReadQueries reads the queries file r (named file in errors): the cases
// JSONL that generate writes and check reads, of which each case's id, query,
// locale and cluster are kept (the other keys are read as the cases reader
// reads them, casefile.StreamCases: unknown keys ignored, a line longer than
// casefile.MaxLine refused), or TSV lines "qid<TAB>query text" (the MS MARCO /
// BEIR layout, as judge --queries reads it), told apart by the first
// non-blank byte ('{': cases). A query id given twice, or a file without a
// query, is an error naming the file (and the line).
func ReadQueries(ctx context.Context, r io.Reader, file string) (Queries, error) {
	br := bufio.NewReaderSize(input.Reader(ctx, r), 64<<10)
	head, _ := br.Peek(64 << 10) // what there is: a read error recurs on reading
	head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	out := Queries{}
	lines := map[string]int{}
	add := func(id string, line int, q Query) error {
		if first, ok := lines[id]; ok {
			return input.Errorf(file, line, "duplicate query id %q (first at line %d)", id, first)
		}
		lines[id], out[id] = line, q
		return nil
	}
	var err error
	if len(head) == 0 || head[0] == '{' {
		err = casefile.StreamCases(ctx, br, file, func(c *casefile.Case) error {
			// The case's strings share blocks: keep copies.
			return add(strings.Clone(c.ID), c.Line, Query{Text: strings.Clone(c.Query), Locale: strings.Clone(c.Locale), Cluster: strings.Clone(c.Cluster)})
		})
	} else {
		err = queriesTSV(ctx, br, file, add)
	}
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, input.Errorf(file, 0, "no queries: want the cases JSONL (`id`, `query`) or TSV lines \"qid<TAB>query text\"")
	}
	return out, nil
}

// queriesTSV reads "qid<TAB>query text" lines (blank lines skipped, a line
// longer than casefile.MaxLine refused), calling add for each, until ctx ends.
func queriesTSV(ctx context.Context, r io.Reader, file string, add func(id string, line int, q Query) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), casefile.MaxLine)
	line := 0
	for sc.Scan() {
		line++
		if line&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		s := strings.TrimRight(sc.Text(), "\r")
		if line == 1 {
			s = strings.TrimPrefix(s, "\uFEFF")
		}
		if strings.TrimSpace(s) == "" {
			continue
		}
		id, text, ok := strings.Cut(s, "\t")
		id, text = strings.TrimSpace(id), strings.TrimSpace(text)
		if !ok || id == "" || text == "" {
			return input.Errorf(file, line, "want the cases JSONL (a line starting with '{') or TSV lines \"qid<TAB>query text\"")
		}
		if err := add(id, line, Query{Text: text}); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return input.Errorf(file, line+1, "line longer than %d MiB", casefile.MaxLine>>20)
		}
		return err
	}
	return nil
}

// clusterOf is the cluster of query id: the --clusters file's where it lists
// the query (it wins over the case's cluster key: a way to cluster the same
// cases otherwise), else the case's cluster in --queries; "" and false: none.
func clusterOf(clusters map[string]string, queries Queries, id string) (string, bool) {
	if c, ok := clusters[id]; ok {
		return c, true
	}
	if q, ok := queries[id]; ok && q.Cluster != "" {
		return q.Cluster, true
	}
	return "", false
}

// hasClusters says whether the options give any query a cluster.
func hasClusters(clusters map[string]string, queries Queries) bool {
	if clusters != nil {
		return true
	}
	for _, q := range queries {
		if q.Cluster != "" {
			return true
		}
	}
	return false
}

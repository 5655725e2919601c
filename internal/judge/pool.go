package judge

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
)

// Query is the text of one query id.
type Query struct {
	ID, Text, Locale string
	line             int // of a TSV file's line (its duplicate's message)
}

// Pair is one (query, document) pair of the pool.
type Pair struct {
	QueryID, Query, Locale string
	DocID, Document        string // card id and DocumentText
}

// Queries maps query ids to their text.
type Queries map[string]Query

// MaxQueriesBytes caps a queries file: a longer or endless one (/dev/zero)
// is refused, read no further than the cap (the queries of MS MARCO's full
// dev set are under 10 MiB). The file is read as a stream; what ReadQueries
// keeps is the queries themselves.
const MaxQueriesBytes = 1 << 30

// ReadQueries reads a queries file, named path in messages: cases JSONL
// (`id`, `query`, optional `locale`) or TSV lines "qid<TAB>query text" (the
// MS MARCO / BEIR layout), detected by the first non-blank byte of its first
// 64 KiB. A silent pipe stops being waited on when ctx ends.
func ReadQueries(ctx context.Context, r io.Reader, path string) (Queries, error) {
	return readQueriesCapped(ctx, r, path, MaxQueriesBytes)
}

// readQueriesCapped is ReadQueries with a cap of max bytes.
func readQueriesCapped(ctx context.Context, r io.Reader, path string, max int64) (Queries, error) {
	capped := &cappedReader{r: input.Reader(ctx, r), left: max}
	qs, err := readQueries(ctx, capped, path)
	if capped.over {
		return nil, input.Errorf(path, 0, "larger than %d bytes, the cap of a queries file", max)
	}
	return qs, err
}

// cappedReader reads r up to left bytes; a byte more sets over and ends the
// stream (an error, so that no reader takes the cut for the file's end).
type cappedReader struct {
	r    io.Reader
	left int64
	over bool
}

var errQueriesCap = errors.New("queries file over its cap")

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		n, err := c.r.Read(one[:])
		if n > 0 {
			c.over = true
			return 0, errQueriesCap
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

func readQueries(ctx context.Context, r io.Reader, path string) (Queries, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(64 << 10) // what there is: a read error recurs on reading
	if errors.Is(err, errQueriesCap) {
		return nil, err
	}
	t := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	qs := Queries{}
	if len(t) > 0 && t[0] == '{' {
		err := QueriesFromCases(ctx, br, path, qs)
		return qs, err
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 1<<16), casefile.MaxLine)
	line := 0
	for sc.Scan() {
		line++
		if line&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		s := strings.TrimRight(sc.Text(), "\r")
		if line == 1 {
			s = strings.TrimPrefix(s, "\ufeff")
		}
		if strings.TrimSpace(s) == "" {
			continue
		}
		id, text, ok := strings.Cut(s, "\t")
		id = strings.TrimSpace(id)
		if !ok || id == "" || strings.TrimSpace(text) == "" {
			return nil, input.Errorf(path, line, "want \"qid<TAB>query text\"")
		}
		if prev, dup := qs[id]; dup {
			return nil, input.Errorf(path, line, "duplicate query id %q (first on line %d)", id, prev.line)
		}
		qs[id] = Query{ID: id, Text: strings.TrimSpace(text), line: line}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, input.Errorf(path, line+1, "line longer than %d MiB", casefile.MaxLine>>20)
	} else if err != nil {
		return nil, input.Errorf(path, line+1, "%v", err)
	}
	if len(qs) == 0 {
		return nil, input.Errorf(path, 0, "no queries")
	}
	return qs, nil
}

// QueriesFromCases adds the queries of a cases JSONL stream to qs. A case without
// a query is skipped; an id already in qs with another text is an error.
func QueriesFromCases(ctx context.Context, r io.Reader, file string, qs Queries) error {
	return casefile.StreamCases(ctx, r, file, func(c *casefile.Case) error {
		if strings.TrimSpace(c.Query) == "" {
			return nil
		}
		q := Query{ID: strings.Clone(c.ID), Text: strings.Clone(c.Query), Locale: strings.Clone(c.Locale)}
		if prev, ok := qs[q.ID]; ok && prev.Text != q.Text {
			return input.Errorf(c.File, c.Line, "case %q has the query %q, but another input gives it %q", q.ID, q.Text, prev.Text)
		}
		qs[q.ID] = q
		return nil
	})
}

// PoolError is what is wrong with query Query of run Run (at document Doc;
// "": the query itself) as BuildPool finds it. A run keeps no line numbers:
// the front end, which opened the run's file, may find the line (File,
// Format: "trec" or "cases") and say it.
type PoolError struct {
	Run, File, Format string
	Query, Doc, Msg   string
}

func (e *PoolError) Error() string { return fmt.Sprintf("run %q (%s): %s", e.Run, e.File, e.Msg) }

// qrelsIDs refuses a query or document of the runs' pool whose id TREC
// qrels cannot hold (trecQueryID; a document id that is empty or holds
// whitespace), as the PoolError of its run: Run checks it before any request
// when the labels are written as TREC qrels, which WriteTREC would refuse
// only once every pair had been judged.
func qrelsIDs(runs []NamedRun) error {
	for _, r := range runs {
		for _, q := range r.Run.Queries {
			if why := trecQueryID(q.ID); why != "" {
				return &PoolError{Run: r.Name, File: r.Run.File, Format: r.Run.Format, Query: q.ID,
					Msg: fmt.Sprintf("query %q: %s cannot be written as TREC qrels (--qrels): give the case another id, or write --judgments alone", q.ID, why)}
			}
			for _, d := range q.Docs {
				if hasSpace(d) {
					return &PoolError{Run: r.Name, File: r.Run.File, Format: r.Run.Format, Query: q.ID, Doc: d,
						Msg: fmt.Sprintf("query %q retrieved %q, an id that holds whitespace, which TREC qrels (--qrels) cannot hold: write --judgments alone", q.ID, d)}
				}
			}
		}
	}
	return nil
}

// NamedRun is one strategy's run.
type NamedRun struct {
	Name string
	Run  *trecfile.Run
}

// BuildPool returns the pool: for every query, the union of each run's top k
// (the runs were read with that k), each (query, document) pair once, ordered
// by query id then document id. Every query needs a text in qs and every
// document must be a card of kb.
func BuildPool(runs []NamedRun, qs Queries, kb *kbfile.KB) ([]Pair, error) {
	docs := map[string]map[string]bool{}
	for _, r := range runs {
		for _, q := range r.Run.Queries {
			if _, ok := qs[q.ID]; !ok {
				return nil, &PoolError{Run: r.Name, File: r.Run.File, Format: r.Run.Format, Query: q.ID,
					Msg: fmt.Sprintf("query %q has no text: give a --queries file that holds it", q.ID)}
			}
			set := docs[q.ID]
			if set == nil {
				set = map[string]bool{}
				docs[q.ID] = set
			}
			for _, d := range q.Docs {
				if !kb.Has(d) {
					return nil, &PoolError{Run: r.Name, File: r.Run.File, Format: r.Run.Format, Query: q.ID, Doc: d,
						Msg: fmt.Sprintf("query %q retrieved %q, which is not a card of the KB %s", q.ID, d, kb.Path)}
				}
				set[d] = true
			}
		}
	}
	qids := make([]string, 0, len(docs))
	for id := range docs {
		qids = append(qids, id)
	}
	slices.Sort(qids)
	var out []Pair
	for _, id := range qids {
		ds := make([]string, 0, len(docs[id]))
		for d := range docs[id] {
			ds = append(ds, d)
		}
		slices.Sort(ds)
		q := qs[id]
		for _, d := range ds {
			card, _ := kb.Card(d)
			out = append(out, Pair{QueryID: id, Query: q.Text, Locale: q.Locale, DocID: d, Document: DocumentText(card)})
		}
	}
	return out, nil
}

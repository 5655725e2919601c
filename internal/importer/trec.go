package importer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// The line-oriented formats: BEIR qrels, TREC and MS MARCO qrels, MS MARCO runs.

func init() {
	register(&Format{Name: "beir-qrels", Shards: ShardHeader, Kind: KindQrels,
		Description: "BEIR qrels: TSV with the header \"query-id corpus-id score\", then qid, docid, integer relevance",
		convert:     convertBEIRQrels})
	register(&Format{Name: "trec-qrels", Shards: ShardLines, Kind: KindQrels,
		Description: "TREC qrels: \"qid iter docid rel\", any integer rel (kept from -128 to 127, clamped into that range beyond it)",
		convert:     convertTRECQrels})
	register(&Format{Name: "msmarco-qrels", Shards: ShardLines, Kind: KindQrels,
		Description: "MS MARCO qrels: tab-separated \"qid 0 docid rel\" (as trec-qrels)",
		convert:     convertTRECQrels})
	register(&Format{Name: "msmarco-run", Shards: ShardLines, Kind: KindRun,
		Description: "MS MARCO run: tab-separated \"qid docid rank\", rank 1 best",
		convert:     convertMSMARCORun})
}

// space is the blank set of TREC files as compare reads them.
func space(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

// fields splits a line at runs of blanks.
func fields(line []byte, dst [][]byte) [][]byte {
	dst = dst[:0]
	i := 0
	for i < len(line) {
		for i < len(line) && space(line[i]) {
			i++
		}
		j := i
		for j < len(line) && !space(line[j]) {
			j++
		}
		if j > i {
			dst = append(dst, line[i:j])
		}
		i = j
	}
	return dst
}

func blank(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }

// clampRel brings a relevance into the range MinRelevance..MaxRelevance that
// compare reads, counting changes; a relevance in the range passes unchanged.
func clampRel(rel int64, st *Stats) int {
	switch {
	case rel < MinRelevance:
		st.ClampedLow++
		return MinRelevance
	case rel > MaxRelevance:
		st.ClampedHigh++
		return MaxRelevance
	}
	return int(rel)
}

// maxIntText is the largest magnitude an integer column or JSON integer may
// have (int64); a relevance beyond -128..127 is clamped, one beyond this is an
// error that says so.
const maxIntText = "9223372036854775807"

// textInt reads a decimal integer column: the value, or what is wrong with it
// ("is out of range" for an integer beyond int64, "is not an integer").
func textInt(b []byte) (int64, string) {
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err == nil {
		return v, ""
	}
	if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Sprintf("%s is out of range (an integer within ±%s)", truncate(b), maxIntText)
	}
	return 0, fmt.Sprintf("%q is not an integer", truncate(b))
}

// judged remembers the judgments written, since compare rejects a document
// judged twice for a query.
type judged map[string]int

func (j judged) check(file string, line int, qid, doc []byte) error {
	k := string(qid) + "\x00" + string(doc)
	if prev, dup := j[k]; dup {
		return Errorf(file, line, "duplicate judgment of document %q for query %q (first on line %d)", truncate(doc), truncate(qid), prev)
	}
	j[k] = line
	return nil
}

// writeQrel writes a TREC qrels line. The line is appended to w's free buffer
// and written at once; bufio.Writer's error is sticky, so the one Write reports
// any earlier failure too and the conversion stops at the first.
func writeQrel(w *bufio.Writer, file string, n int, qid, doc []byte, rel int) error {
	b := w.AvailableBuffer()
	b = append(b, qid...)
	b = append(b, " 0 "...)
	b = append(b, doc...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(rel), 10)
	b = append(b, '\n')
	return writeTRECLine(w, file, n, b)
}

// writeTRECLine writes one qrels or run line, refused when it is longer than
// compare reads (trecfile.MaxLineBytes): import never writes a line compare
// then rejects.
func writeTRECLine(w *bufio.Writer, file string, n int, b []byte) error {
	if len(b)-1 > maxOutput[KindQrels] {
		return Errorf(file, n, "the converted TREC line would be %d bytes, longer than compare reads (%s): an id is too long", len(b)-1, sizeText(int64(maxOutput[KindQrels])))
	}
	_, err := w.Write(b)
	return err
}

func convertBEIRQrels(ctx context.Context, br *bufio.Reader, file string, w *bufio.Writer, opt Options, st *Stats) error {
	header := false
	seen := judged{}
	return lines(ctx, br, file, func(n int, line []byte) error {
		if blank(line) {
			return nil
		}
		cols := bytes.Split(line, []byte{'\t'})
		if !header {
			header = true
			if len(cols) != 3 || string(bytes.TrimSpace(cols[0])) != "query-id" || string(bytes.TrimSpace(cols[1])) != "corpus-id" || string(bytes.TrimSpace(cols[2])) != "score" {
				return Errorf(file, n, "BEIR qrels start with the tab-separated header \"query-id corpus-id score\", got %q", truncate(line))
			}
			return nil
		}
		if len(cols) != 3 {
			return Errorf(file, n, "want 3 tab-separated columns \"query-id corpus-id score\", got %d", len(cols))
		}
		qid, doc := bytes.TrimSpace(cols[0]), bytes.TrimSpace(cols[1])
		if err := trecQueryID(file, n, "query-id", qid); err != nil {
			return err
		}
		if err := trecID(file, n, "corpus-id", doc); err != nil {
			return err
		}
		rel, why := textInt(bytes.TrimSpace(cols[2]))
		if why != "" {
			return Errorf(file, n, "score %s", why)
		}
		if err := seen.check(file, n, qid, doc); err != nil {
			return err
		}
		if err := writeQrel(w, file, n, qid, doc, clampRel(rel, st)); err != nil {
			return err
		}
		st.Records++
		return nil
	})
}

func convertTRECQrels(ctx context.Context, br *bufio.Reader, file string, w *bufio.Writer, opt Options, st *Stats) error {
	var f [][]byte
	seen := judged{}
	return lines(ctx, br, file, func(n int, line []byte) error {
		if f = fields(line, f); len(f) == 0 {
			return nil
		}
		if len(f) != 4 {
			return Errorf(file, n, "want 4 fields \"qid iter docid rel\", got %d", len(f))
		}
		if err := trecQueryID(file, n, "qid", f[0]); err != nil {
			return err
		}
		rel, why := textInt(f[3])
		if why != "" {
			return Errorf(file, n, "relevance %s", why)
		}
		if err := seen.check(file, n, f[0], f[2]); err != nil {
			return err
		}
		if err := writeQrel(w, file, n, f[0], f[2], clampRel(rel, st)); err != nil {
			return err
		}
		st.Records++
		return nil
	})
}

func convertMSMARCORun(ctx context.Context, br *bufio.Reader, file string, w *bufio.Writer, opt Options, st *Stats) error {
	tag := opt.RunTag
	if tag == "" {
		tag = "msmarco"
	}
	if err := trecID(file, 0, "run tag", []byte(tag)); err != nil {
		return err
	}
	var f [][]byte
	return lines(ctx, br, file, func(n int, line []byte) error {
		if f = fields(line, f); len(f) == 0 {
			return nil
		}
		if len(f) != 3 {
			return Errorf(file, n, "want 3 fields \"qid docid rank\", got %d", len(f))
		}
		if err := trecQueryID(file, n, "qid", f[0]); err != nil {
			return err
		}
		rank64, why := textInt(f[2])
		if why == "" && rank64 < 1 {
			why = fmt.Sprintf("%q is not a positive integer", truncate(f[2]))
		}
		if why == "" && rank64 > math.MaxInt32 {
			why = fmt.Sprintf("%s is out of range (a rank from 1 to %d)", truncate(f[2]), math.MaxInt32)
		}
		if why != "" {
			return Errorf(file, n, "rank %s", why)
		}
		rank := int(rank64)
		if err := writeRunLine(w, file, n, f[0], f[1], rank, tag); err != nil {
			return err
		}
		st.Records++
		return nil
	})
}

// writeRunLine writes a TREC run line whose score, -rank, orders documents as the
// ranks do (compare ranks TREC runs by score, as trec_eval does).
func writeRunLine(w *bufio.Writer, file string, n int, qid, doc []byte, rank int, tag string) error {
	b := w.AvailableBuffer()
	b = append(b, qid...)
	b = append(b, " Q0 "...)
	b = append(b, doc...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(rank), 10)
	b = append(b, " -"...)
	b = strconv.AppendInt(b, int64(rank), 10)
	b = append(b, ' ')
	b = append(b, tag...)
	b = append(b, '\n')
	return writeTRECLine(w, file, n, b)
}

// trecID checks that an id can be a field of a whitespace-separated TREC line.
func trecID(file string, line int, what string, id []byte) error {
	if len(id) == 0 {
		return Errorf(file, line, "%s is empty", what)
	}
	// Byte-wise is rune-wise here: the blanks are ASCII, and a byte below 0x80 is
	// never part of a multi-byte UTF-8 sequence, valid or not.
	if slices.ContainsFunc(id, space) {
		return Errorf(file, line, "%s %q contains whitespace, which a TREC file cannot hold", what, truncate(id))
	}
	return nil
}

// trecQueryID checks a query id, the first field of every TREC line: a TREC id
// (trecID) that does not start with '{', since the qrels and run readers take a
// file whose first line starts with '{' for JSON lines.
func trecQueryID(file string, line int, what string, id []byte) error {
	if err := trecID(file, line, what, id); err != nil {
		return err
	}
	if id[0] == '{' {
		return Errorf(file, line, "%s %q starts with '{': a TREC file whose first line starts with '{' is read as JSON lines", what, truncate(id))
	}
	return nil
}

// truncate shortens a value quoted in an error message.
func truncate(b []byte) string {
	const max = 80
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}

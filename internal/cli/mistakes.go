package cli

// A file given to the wrong flag says what it is and where it goes (issue 32
// item 10): a CSV given to --cases points to `retrieval-gate import`, a cases
// file given to report --from says it is one. Only the error of a file that
// could not be read is explained, from the file's first bytes; a file that
// reads is never second-guessed.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/importer"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// headSize is how much of a file is read to say what it is.
const headSize = 64 << 10

// fileHead is the start of the regular file path (never a pipe or a device,
// which a second open would block on or drain) and the line of its first
// non-blank line; ok is false when there is none to read.
func fileHead(path string) (head []byte, first int, ok bool) {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return nil, 0, false
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, false
	}
	defer f.Close()
	head = make([]byte, headSize)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, 0, false
	}
	head = head[:n]
	rest := input.TrimBOM(head)
	for line := 1; len(rest) > 0; line++ {
		l, after, _ := bytes.Cut(rest, []byte("\n"))
		if !input.IsBlank(l) {
			return head, line, true
		}
		rest = after
	}
	return nil, 0, false
}

// firstObject is the keys of the JSON object on the first non-blank line of
// head, nil when that line is not one (or longer than head).
func firstObject(head []byte) map[string]json.RawMessage {
	rest := input.TrimBOM(head)
	for len(rest) > 0 {
		l, after, found := bytes.Cut(rest, []byte("\n"))
		if input.IsBlank(l) {
			rest = after
			continue
		}
		if !found && len(head) == headSize {
			return nil // cut
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(l, &m) != nil {
			return nil
		}
		return m
	}
	return nil
}

// isCaseLine reports whether keys are those of a case (cases JSONL): a query
// with its id, gold ids or what was retrieved.
func isCaseLine(keys map[string]json.RawMessage) bool {
	_, query := keys["query"]
	_, id := keys["id"]
	_, gold := keys["must_cite_one_of"]
	_, retrieved := keys["retrieved"]
	return query && (id || gold || retrieved)
}

// whatFile says what the file at path is, from its first bytes ("a cases
// file (JSONL, one case per line, with \"query\")"), and what reads it ("check
// --cases and retrieve --cases read it"); "" when it cannot tell.
func whatFile(path string) (what, reads string) {
	head, _, ok := fileHead(path)
	if !ok {
		return "", ""
	}
	if bytes.HasPrefix(head, []byte{0x1f, 0x8b}) {
		return "a gzip file (as check --write-baseline writes a baseline)", "check --baseline reads a baseline"
	}
	if keys := firstObject(head); keys != nil {
		var schema string
		_ = json.Unmarshal(keys["schema"], &schema)
		_, text := keys["text"]
		_, title := keys["title"]
		_, id := keys["id"]
		switch {
		case schema == "retrieval-gate/history@1":
			return "a history of runs (retrieval-gate/history@1, one run per line)", "report --history charts it"
		case isCaseLine(keys):
			return `a cases file (JSONL, one case per line, with "query")`, "check --cases and retrieve --cases read it"
		case id && (text || title):
			return `a knowledge base of cards (JSONL, one card per line, with "text")`, "--kb reads it"
		}
	}
	if f, _ := importer.Detect(head); f != nil {
		return "a " + shortDescription(f) + ", import format " + f.Name, "`retrieval-gate import` converts it"
	}
	return "", ""
}

// shortDescription is the head of an import format's description, up to its
// first colon: "CSV with a header", "TREC qrels".
func shortDescription(f *importer.Format) string {
	d, _, _ := strings.Cut(f.Description, ": ")
	return d
}

// notCases explains err, an error reading path as cases JSONL (--cases), when
// it is at the file's first record and the file is a format
// `retrieval-gate import` reads (a CSV with a query column, BEIR, TREC, ragas,
// …) or a file of another kind: what the file is and the command that takes it
// or converts it. Any other error is returned as it is.
func notCases(path string, err error) error {
	if err == nil || path == "" || path == "-" {
		return err
	}
	file, line := input.Location(err)
	if file != path {
		return err
	}
	head, first, ok := fileHead(path)
	if !ok || line != first {
		return err
	}
	if keys := firstObject(head); keys != nil && isCaseLine(keys) {
		return err // a case: the error is about it, not about the file's kind
	}
	if strings.Contains(err.Error(), "retrieval-gate import") {
		return err // the reader named the conversion already (a ragas record)
	}
	convert := fmt.Sprintf("retrieval-gate import --in %s --out cases.jsonl", path)
	f, _ := importer.Detect(head)
	switch {
	case f != nil && f.Kind == importer.KindCases:
		return input.Errorf(path, line, "not cases JSONL but %s (import format %s): convert it with `%s`, then give --cases cases.jsonl (docs/import.md)", shortDescription(f), f.Name, convert)
	case f != nil && f.Kind == importer.KindQrels:
		return input.Errorf(path, line, "not cases JSONL but relevance judgments, %s (import format %s): compare --qrels reads judgments; a case is a JSON object per line with \"query\" and \"must_cite_one_of\" (docs/formats.md)", shortDescription(f), f.Name)
	case f != nil && f.Kind == importer.KindRun:
		return input.Errorf(path, line, "not cases JSONL but a ranked run, %s (import format %s): compare --run reads runs (`retrieval-gate import` converts it to a TREC run)", shortDescription(f), f.Name)
	case f != nil:
		return input.Errorf(path, line, "not cases JSONL but %s (import format %s): `retrieval-gate import` converts it", shortDescription(f), f.Name)
	}
	if what, reads := whatFile(path); what != "" {
		return input.Errorf(path, line, "not cases JSONL but %s: %s", what, reads)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv", ".tsv":
		why := err.Error()
		var ie *input.Error
		if errors.As(err, &ie) {
			why = ie.Msg
		}
		return input.Errorf(path, line, "not cases JSONL but a CSV file (%s): `%s` converts a CSV whose header has a query column (and retrieved, gold), docs/import.md", why, convert)
	}
	return err
}

// notDocument explains err, an error reading path as a saved --json report
// (report --from), by what the file is when it is something else.
func notDocument(path string, err error) error {
	if err == nil || path == "" || path == "-" {
		return err
	}
	if file, _ := input.Location(err); file != path {
		return err
	}
	what, reads := whatFile(path)
	if what == "" {
		return err
	}
	_, first, _ := fileHead(path)
	return input.Errorf(path, first, "%s, not a saved --json report (report --from renders the --json file of check, compare or calibrate); %s", what, reads)
}

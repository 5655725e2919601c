package importer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// parent is the card identity of a retrieved id under the options.
func (o Options) parent(id string) string {
	if o.ParentRegexp != nil {
		return casefile.ParentFromIDRegexp(id, o.ParentRegexp)
	}
	return casefile.ParentFromID(id, o.ParentSep)
}

// caseOut is a case as written: the contract's field names, in this order.
type caseOut struct {
	ID        string      `json:"id"`
	Locale    string      `json:"locale,omitempty"`
	Type      string      `json:"type,omitempty"`
	Query     string      `json:"query"`
	Gold      []string    `json:"must_cite_one_of,omitempty"`
	Retrieved []retrieved `json:"retrieved"`
}

// retrieved is one entry; it marshals as a bare id string when it has only an id.
type retrieved struct {
	ID       string
	ParentID string
	Text     string
}

func (r retrieved) MarshalJSON() ([]byte, error) {
	if r.ParentID == "" && r.Text == "" {
		return json.Marshal(r.ID)
	}
	return json.Marshal(struct {
		ID       string `json:"id"`
		ParentID string `json:"parent_id,omitempty"`
		Text     string `json:"text,omitempty"`
	}{r.ID, r.ParentID, r.Text})
}

// caseWriter writes cases JSONL and rejects duplicate or empty ids.
type caseWriter struct {
	w    *bufio.Writer
	seen map[string]int // case id -> line (or element) it came from
	buf  bytes.Buffer
	enc  *json.Encoder
	opt  Options
	st   *Stats
}

func newCaseWriter(w *bufio.Writer, opt Options, st *Stats) *caseWriter {
	cw := &caseWriter{w: w, seen: map[string]int{}, opt: opt, st: st}
	cw.enc = json.NewEncoder(&cw.buf)
	cw.enc.SetEscapeHTML(false)
	return cw
}

// entries builds the retrieved list from ids and optional texts (same length or nil).
func (cw *caseWriter) entries(ids, texts []string) []retrieved {
	out := make([]retrieved, len(ids))
	for i, id := range ids {
		out[i].ID = id
		if p := cw.opt.parent(id); p != id {
			out[i].ParentID = p
		}
		if texts != nil {
			out[i].Text = texts[i]
		}
	}
	return out
}

func (cw *caseWriter) write(file string, line int, c caseOut) error {
	switch {
	case c.ID == "":
		return Errorf(file, line, "the case has no id")
	case c.Query == "":
		return Errorf(file, line, "case %q has no query", c.ID)
	}
	if prev, dup := cw.seen[c.ID]; dup {
		return Errorf(file, line, "duplicate case id %q (first at line %d)", c.ID, prev)
	}
	for i, g := range c.Gold {
		if g == "" {
			return Errorf(file, line, "case %q: gold id %d is empty", c.ID, i+1)
		}
	}
	for i, r := range c.Retrieved {
		if r.ID == "" {
			return Errorf(file, line, "case %q: retrieved id %d is empty", c.ID, i+1)
		}
	}
	if n := len(c.Gold) + len(c.Retrieved); n > jsonpos.MaxValues {
		return Errorf(file, line, "case %q would hold %s ids, more than check reads in one case (%s values)", truncate([]byte(c.ID)), format.Thousands(n), format.Thousands(jsonpos.MaxValues))
	}
	cw.seen[c.ID] = line
	if c.Retrieved == nil {
		c.Retrieved = []retrieved{}
	}
	// The line's size before it is built: escaping multiplies a record (up to
	// six times), and the cap is checked on what would be written.
	if n := caseLineLen(&c, maxOutput[KindCases]); n > maxOutput[KindCases] {
		return Errorf(file, line, "case %q would be a line of more than %s once converted (JSON escapes included), longer than check reads", truncate([]byte(c.ID)), sizeText(int64(maxOutput[KindCases])))
	}
	cw.buf.Reset()
	if err := cw.enc.Encode(c); err != nil {
		return fmt.Errorf("%s:%d: %w", file, line, err)
	}
	if _, err := cw.w.Write(cw.buf.Bytes()); err != nil {
		return err
	}
	cw.st.Records++
	return nil
}

// splitList reads a list held in one text value: a JSON array of strings, or
// values separated by sep (default "|"), each trimmed; "" is the empty list.
// errTooManyIDs refuses a list of more ids than a case line may hold (the
// cases reader's cap on a record's values, jsonpos.MaxValues), before the list
// is split: import never writes a line check refuses.
var errTooManyIDs = fmt.Errorf("more than %s ids in one list (the cap on what a case may take in memory)", format.Thousands(jsonpos.MaxValues))

func splitList(s, sep string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	if strings.HasPrefix(s, "[") {
		var sc jsonpos.Scanner // the values cap before encoding/json's slice
		if err := sc.Check([]byte(s)); err != nil {
			var se *jsonpos.SyntaxError
			if errors.As(err, &se) && se.Cap {
				return nil, errTooManyIDs
			}
		}
		var out []string
		if err := json.Unmarshal([]byte(s), &out); err != nil {
			return nil, fmt.Errorf("not a JSON array of strings: %w", err)
		}
		return out, nil
	}
	if sep == "" {
		sep = "|"
	}
	if strings.Count(s, sep) >= jsonpos.MaxValues {
		return nil, errTooManyIDs
	}
	parts := strings.Split(s, sep)
	out := parts[:0]
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out, nil
}

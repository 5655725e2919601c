package importer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

func init() {
	register(&Format{Name: "promptfoo", Shards: ShardNone, Kind: KindCases,
		Description: "promptfoo results JSON (promptfoo eval -o results.json): results.results[] with vars (query, gold_ids) and the retrieved ids in response.metadata.retrieved_ids or response.output",
		convert:     convertPromptfoo})
}

// Where a promptfoo result holds what a case needs. vars are the test's
// variables; the retrieved ids come from the provider's response.
var (
	promptfooQueryVars = []string{"query", "question", "user_input"}
	promptfooGoldVars  = []string{"gold_ids", "must_cite_one_of", "reference_context_ids"}
	promptfooIDVars    = []string{"id", "case_id"}
	promptfooRetrieved = []string{"retrieved_ids", "retrieved_context_ids"}
)

// convertPromptfoo reads the file `promptfoo eval -o results.json` writes,
// {"evalId", "results": {"version": 3, "results": [EvaluateResult...]}, "config", ...},
// or a bare summary {"version", "results": [...]}. Each result is one (test,
// prompt, provider) cell; a file with several providers needs Options.Provider.
func convertPromptfoo(ctx context.Context, br *bufio.Reader, file string, w *bufio.Writer, opt Options, st *Stats) error {
	d := newJSONDoc(br, file, opt)
	top, err := d.key("results", "the promptfoo file")
	if err != nil {
		return err
	}
	// The output file's "results" is the summary object holding the results
	// array; a bare summary's "results" is the array.
	off := d.dec.InputOffset()
	tok, err := d.token()
	if err != nil {
		return d.syntax(err)
	}
	var summary map[string]bool // the keys of the summary object, when "results" is one
	switch tok {
	case json.Delim('{'):
		if summary, err = d.member("results", "the promptfoo summary (\"results\")"); err != nil {
			return err
		}
		if err := d.delim('[', "results.results (a JSON array)"); err != nil {
			return err
		}
	case json.Delim('['):
	default:
		return d.errAt(off, "\"results\" must be an object or an array, got %v", tok)
	}
	cw := newCaseWriter(w, opt, st)
	provider := ""
	err = d.elements(ctx, "results", func(i int, off int64, o object) error {
		line := 0
		if opt.LineAt != nil {
			line = opt.LineAt(off)
		}
		name, err := promptfooProvider(o)
		if err != nil {
			return d.errAt(off, "results[%d]: %v", i, err)
		}
		if opt.Provider != "" {
			if name != opt.Provider && !promptfooProviderID(o, opt.Provider) {
				return nil
			}
		} else if provider == "" {
			provider = name
		} else if name != provider {
			return d.errAt(off, "results[%d]: the file holds results of several providers (%q, %q): pick one with --provider", i, provider, name)
		}
		c, err := promptfooCase(o, opt)
		if err != nil {
			return d.errAt(off, "results[%d]: %v", i, err)
		}
		return cw.write(file, line, c)
	})
	if err != nil {
		return err
	}
	// The members after "results": a key repeated there is an error too.
	if summary != nil {
		if err := d.rest(summary, "the promptfoo summary (\"results\")"); err != nil {
			return err
		}
	}
	if err := d.rest(top, "the promptfoo file"); err != nil {
		return err
	}
	return d.end("the promptfoo file's object")
}

func promptfooProvider(o object) (string, error) {
	var p struct {
		ID    string `json:"id"`
		Label string `json:"label"`
	}
	if raw, ok := o["provider"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &p); err != nil {
			var s string // older files hold the provider id as a string
			if json.Unmarshal(raw, &s) != nil {
				return "", fmt.Errorf("\"provider\" must be an object {\"id\", \"label\"}")
			}
			p.ID = s
		}
	}
	if p.Label != "" {
		return p.Label, nil
	}
	return p.ID, nil
}

func promptfooProviderID(o object, want string) bool {
	var p struct {
		ID string `json:"id"`
	}
	return json.Unmarshal(o["provider"], &p) == nil && p.ID == want
}

func (o object) sub(key string) (object, error) {
	raw, ok := o[key]
	if !ok || isNull(raw) {
		return object{}, nil
	}
	var s object
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%q must be an object, got %s", key, jsonKind(raw))
	}
	return s, nil
}

func promptfooCase(o object, opt Options) (caseOut, error) {
	var c caseOut
	vars, err := o.sub("vars")
	if err != nil {
		return c, err
	}
	if len(vars) == 0 { // older files keep the vars only on the test case
		tc, err := o.sub("testCase")
		if err != nil {
			return c, err
		}
		if vars, err = tc.sub("vars"); err != nil {
			return c, fmt.Errorf("testCase: %w", err)
		}
	}
	qk := vars.firstOf(promptfooQueryVars...)
	if qk == "" {
		return c, fmt.Errorf("vars has none of %s (the query)", strings.Join(promptfooQueryVars, ", "))
	}
	if c.Query, _, err = vars.str(qk); err != nil {
		return c, fmt.Errorf("vars: %w", err)
	}
	if k := vars.firstOf(promptfooIDVars...); k != "" {
		if c.ID, _, err = vars.str(k); err != nil {
			return c, fmt.Errorf("vars: %w", err)
		}
	} else {
		var idx struct {
			TestIdx   *int `json:"testIdx"`
			PromptIdx int  `json:"promptIdx"`
		}
		b, _ := json.Marshal(map[string]json.RawMessage{"testIdx": o["testIdx"], "promptIdx": o["promptIdx"]})
		if json.Unmarshal(b, &idx) != nil || idx.TestIdx == nil {
			return c, fmt.Errorf("no vars.id and no integer \"testIdx\" to name the case")
		}
		c.ID = "test-" + strconv.Itoa(*idx.TestIdx)
		if idx.PromptIdx > 0 {
			c.ID += "-p" + strconv.Itoa(idx.PromptIdx)
		}
	}
	if c.Locale, _, err = vars.str("locale"); err != nil {
		return c, fmt.Errorf("vars: %w", err)
	}
	if k := vars.firstOf(promptfooGoldVars...); k != "" {
		if c.Gold, _, err = vars.list(k, opt.ListSep); err != nil {
			return c, fmt.Errorf("vars: %w", err)
		}
	}
	ids, err := promptfooRetrievedIDs(o)
	if err != nil {
		return c, err
	}
	c.Retrieved = (&caseWriter{opt: opt}).entries(ids, nil)
	return c, nil
}

// promptfooRetrievedIDs takes response.metadata.retrieved_ids (or
// retrieved_context_ids), else response.output when it is a JSON array of ids or
// of objects with an "id" (or a string holding such an array).
func promptfooRetrievedIDs(o object) ([]string, error) {
	resp, err := o.sub("response")
	if err != nil {
		return nil, err
	}
	md, err := resp.sub("metadata")
	if err != nil {
		return nil, fmt.Errorf("response: %w", err)
	}
	if k := md.firstOf(promptfooRetrieved...); k != "" {
		ids, _, err := md.list(k, "")
		if err != nil {
			return nil, fmt.Errorf("response.metadata: %w", err)
		}
		return ids, nil
	}
	raw := resp["output"]
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	if b := bytes.TrimSpace(raw); len(b) > 0 && b[0] == '[' {
		var sc jsonpos.Scanner // an output string's JSON is counted too (the values cap)
		if err := sc.Check(b); err != nil {
			var se *jsonpos.SyntaxError
			if errors.As(err, &se) && se.Cap {
				return nil, fmt.Errorf("response.output: %w", errTooManyIDs)
			}
		}
		var items []json.RawMessage
		if err := json.Unmarshal(b, &items); err == nil {
			ids := make([]string, len(items))
			for i, it := range items {
				if id, _, err := (object{"": it}).str(""); err == nil && id != "" {
					ids[i] = id
					continue
				}
				var e object
				if json.Unmarshal(it, &e) == nil {
					if id, _, err := e.str("id"); err == nil && id != "" {
						ids[i] = id
						continue
					}
				}
				return nil, fmt.Errorf("response.output[%d] is neither an id nor an object with an \"id\"", i)
			}
			return ids, nil
		}
	}
	return nil, fmt.Errorf("no retrieved ids: want response.metadata.retrieved_ids, or response.output as a JSON array of ids")
}

package casefile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

var caseSeeds = []string{
	`{"id": "en-golden-001", "locale": "en", "type": "golden", "query": "How do I reset my password?", "must_cite_one_of": ["en-reset-password", "en-two-factor"], "retrieved": [{"id": "en-reset-password#c1", "parent_id": "en-reset-password", "score": 0.83}, "en-two-factor"]}`,
	`{"id":"a","must_cite_one_of":[],"retrieved":[]}`,
	`{"id":"s","scores":{"retrieval_hit_at_k":1.0,"retrieval_recall_at_k":0.5,"x":null}}`,
	`{"id":"a","retrieved":[],"scores":{}}`,
	`{"id":"\u0065n-\"q\"\\\/\t","query":"¿Cómo? \ud83d\ude00 \ud800x","must_cite_one_of":["\u00e9t\u00E9"]}`,
	`{"\u0069d":"x","id":1,"id":"y","retrieved":[{"id":"c#1","parent_id":null,"text":"t\n","meta":{"a":[1,{"b":null}]},"score":-1.5e2}]}`,
	`{"id":"n","retrieved":[{"id":"a","score":0},{"id":"b","score":-0.0},{"id":"c","score":1E+2},{"id":"d","score":1e999}]}`,
	"{\"id\":\"a\xffb\",\"must_cite_one_of\":[\"\xc3\"]}",
	`{"id":"a","retrieved":[1,{"id":2},{"parent_id":"p"},""],"scores":{"b":"x","a":true}}`,
	// The fast path of a retrieved entry and its near misses.
	`{"id":"f","retrieved":[{"id": "a#1", "parent_id": "a", "score": 0.5}, {"id":"b","parent_id":"","score":-1}, {"id": "c", "parent_id": "c", "score": 1, "id": "d"}]}`,
	`{"id":"f","retrieved":[{"id": "", "parent_id": "p", "score": 1}, {"id": "a", "parent_id": "p", "score": 1e400}, {"id": "a", "parent_id": "p", "score": 01}]}`,
	`{"id":"f","retrieved":[{"id":  "a", "parent_id": "p", "score": 1 }, {"id": "a", "parent_id" : "p", "score": -}, {"id": "\u0061", "parent_id": "\u00e9", "score": 2.50}]}`,
	"{\"id\":\"f\",\"retrieved\":[{\"id\": \"\xff\", \"parent_id\": \"é\", \"score\": 0.1234567890123456}, {\"id\": \"a\", \"parent_id\": null, \"score\": 1}]}",
	// The cluster key (issue 34 item 2).
	`{"id": "c", "cluster": "en-reset-password", "query": "q"}`, `{"id":"c","cluster":null}`, `{"id":"c","cluster":3}`,
	`{"id":"c","cluster":"a","cluster":"b"}`, `{"id":"c","cluster":"\u00e9t\u00e9","relevant_ids":[1]}`,
	`[1,2]`, `null`, `{"id":"a"`, `{"id":"a"} x`, `{"id":01}`, ` { } `,
}

// FuzzParseCase checks the scanner against the encoding/json reference: same
// validity, same values, same type-error message, and that an accepted case
// re-encoded by encoding/json parses back to the same values.
func FuzzParseCase(f *testing.F) {
	for _, s := range caseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var p CaseParser
		var c Case
		err := p.Parse(line, "f.jsonl", 1, &c)
		vp := CaseParser{StringsInLine: true} // strings that view the line
		var vc Case
		if verr := vp.Parse(line, "f.jsonl", 1, &vc); fmt.Sprint(verr) != fmt.Sprint(err) {
			t.Fatalf("%q: with StringsInLine %v, without %v", line, verr, err)
		}
		ref, msg, malformed := refParse(line)
		switch {
		case malformed:
			if err == nil || !strings.HasPrefix(err.Error(), "f.jsonl:1: malformed JSON: ") {
				t.Fatalf("encoding/json rejects %q, scanner says %v", line, err)
			}
			return
		case msg != "":
			if err == nil || err.Error() != "f.jsonl:1: "+msg {
				t.Fatalf("%q: want error %q, got %v", line, msg, err)
			}
			return
		case err != nil:
			t.Fatalf("%q: reference accepts, scanner says %v", line, err)
		}
		got := toRef(&c)
		if !sameRef(ref, got) {
			t.Fatalf("%q:\nscanner   %+v\nreference %+v", line, got, ref)
		}
		if !sameRef(got, toRef(&vc)) {
			t.Fatalf("%q: with StringsInLine:\n%+v\n%+v", line, toRef(&vc), got)
		}
		if c.Type == "" || c.ID == "" || c.File != "f.jsonl" || c.Line != 1 || !bytes.Equal(c.Raw, line) {
			t.Fatalf("%q: bad case %+v", line, c)
		}
		for _, r := range c.Retrieved {
			if r.ID == "" {
				t.Fatalf("%q: empty retrieved id", line)
			}
		}

		// Round trip through encoding/json.
		enc := map[string]any{"id": c.ID, "type": c.Type}
		if c.Locale != "" {
			enc["locale"] = c.Locale
		}
		if c.Query != "" {
			enc["query"] = c.Query
		}
		if len(c.Gold) > 0 {
			enc["must_cite_one_of"] = c.Gold
		}
		if c.HasRetrieved {
			rs := []any{}
			for _, r := range c.Retrieved {
				o := map[string]any{"id": r.ID, "text": "ignored"}
				if r.ParentID != "" {
					o["parent_id"] = r.ParentID
				}
				if r.HasScore {
					o["score"] = r.Score
				}
				rs = append(rs, o)
			}
			enc["retrieved"] = rs
		}
		if c.Scores != nil {
			enc["scores"] = c.Scores
		}
		if len(c.Relevant) > 0 {
			enc["relevant_ids"] = c.Relevant
		}
		if c.Cluster != "" {
			enc["cluster"] = c.Cluster
		}
		for _, k := range c.Unknown {
			enc[k] = nil // unknown keys are counted, not kept: any value reads the same
		}
		b, err := json.Marshal(enc)
		if err != nil {
			t.Fatal(err)
		}
		var c2 Case
		if err := p.Parse(b, "f.jsonl", 1, &c2); err != nil {
			t.Fatalf("%q re-encoded as %s: %v", line, b, err)
		}
		if !sameRef(got, toRef(&c2)) {
			t.Fatalf("round trip of %q through %s:\n%+v\n%+v", line, b, got, toRef(&c2))
		}
	})
}

package casefile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
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
	// parseFast's shapes and their near misses.
	`{"id": "case-1", "locale": "pt-BR", "type": "golden", "query": "Como faço a troca?", "must_cite_one_of": ["card-1", "card-2"], "retrieved": [{"id": "card-1#c0", "parent_id": "card-1", "score": 0.921}, {"id": "card-9#c1", "parent_id": "", "score": -0}]}`,
	`{"id":"case-2","locale":"en","query":"q","relevant_ids":["r"],"must_cite_one_of":[],"retrieved":[{"id":"a#1","parent_id":"a","score":12.5}],"retrieval":{"strategy":"dense","k":[1,{"x":null}]},"generator":"g","query_style":"s"}`,
	`{"id": "c", "retrieved": [{"id": "a", "parent_id": "a", "score": 0.1}], "retrieval": {"a": 1, "a": 2}}`,
	`{"id": "c", "type": "", "locale": "", "query": "", "retrieved": [{"id": "a", "parent_id": "a", "score": 0.1},{"id": "b", "parent_id": "b", "score": 1e1}]}`,
	`{"id": "c", "retrieved": [{"id": "a", "parent_id": "a", "score": 0.1234567890123456}, {"id": "a", "parent_id": "a", "score": 00.1}]}`,
	"{\"id\": \"c\u00e9\", \"query\": \"a\x7fb\", \"retrieved\": [{\"id\": \"a\xe9\", \"parent_id\": \"a\", \"score\": 1}]}",
	"{\"id\": \"c\", \"query\": \"a\tb\"}", "{\"id\": \"c\",\t\"query\": \"b\"}", `{"id": "c",  "query": "b"}`, `{"id": "c", "id": "d"}`,
	`{"id": "c", "retrieved": [{"id": "a", "parent_id": "a", "score": 0.5} , {"id": "b" , "parent_id": "b" , "score": 1 }]} `,
	`[1,2]`, `null`, `{"id":"a"`, `{"id":"a"} x`, `{"id":01}`, ` { } `,
	// retrieval.k (RetrievalK): valid, null, refused, and the near misses of the fast path.
	`{"id": "r", "retrieved": [{"id": "a", "parent_id": "a", "score": 0.5}], "retrieval": {"strategy": "dense", "store": "memory", "embedder": "hash", "k": 10}}`,
	`{"id": "r", "retrieval": {"k": null}}`, `{"id": "r", "retrieval": null}`, `{"id": "r", "retrieval": {}}`, `{"id": "r", "retrieval": { }}`,
	`{"id": "r", "retrieval": {"k": "10"}}`, `{"id": "r", "retrieval": {"k": 0}}`, `{"id": "r", "retrieval": {"k": -3}}`, `{"id": "r", "retrieval": {"k": 2.5}}`,
	`{"id": "r", "retrieval": {"k": 1e3}}`, `{"id": "r", "retrieval": {"k": 99999999999999999999}}`, `{"id": "r", "retrieval": {"k": [1]}}`,
	`{"id": "r", "retrieval": 5}`, `{"id": "r", "retrieval": "k"}`, `{"id": "r", "retrieval": [{"k": 1}]}`, `{"id": "r", "retrieval": {"\u006b": 0}}`,
	`{"id": "r", "retrieval": {"k": 1, "k": 2}}`, `{"id": "r", "retrieval": {"k": 0, "x": }}`, `{"retrieval": {"k": 0}}`, `{"id": 1, "retrieval": {"k": 0}}`,
	`{"id": "r", "retrieval": {"x": {"k": 0}, "k":3}}`, "{\"id\": \"r\", \"retrieval\": {\"k\": \"\xff\u00e9\"}}",
}

// errText is err's text, "<nil>" for none.
func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// refRetrievalK is what encoding/json finds wrong with the retrieval.k of a
// valid case line, the rule of RetrievalK: "retrieval" absent or null, "k"
// absent or null, or "k" an integer literal from 1 to MaxInt; "" when nothing is.
func refRetrievalK(line []byte) string {
	var o map[string]json.RawMessage
	if err := json.Unmarshal(line, &o); err != nil {
		panic(fmt.Sprintf("%q: a valid case is not an object: %v", line, err))
	}
	r, ok := o["retrieval"]
	if !ok || string(r) == "null" {
		return ""
	}
	var ro map[string]json.RawMessage
	if r[0] != '{' || json.Unmarshal(r, &ro) != nil {
		var v any
		_ = json.Unmarshal(r, &v)
		return `retrieval.k cannot be read: field "retrieval" must be an object, got ` + jsonTypeOf(numberAsNumber(v))
	}
	k, ok := ro["k"]
	if !ok || string(k) == "null" {
		return ""
	}
	got := string(k)
	switch k[0] {
	case '"':
		var str string
		if err := json.Unmarshal(k, &str); err != nil {
			panic(err)
		}
		if r := []rune(str); len(r) > 40 {
			got = strconv.Quote(string(r[:40])) + "…"
		} else {
			got = strconv.Quote(str)
		}
	case '{':
		got = "object"
	case '[':
		got = "array"
	case 't', 'f':
		got = string(k)
	default:
		if n, err := strconv.ParseInt(string(k), 10, strconv.IntSize); err == nil && n >= 1 && !strings.ContainsAny(string(k), ".eE") {
			return ""
		}
		if len(got) > 40 {
			got = got[:40] + "…"
		}
	}
	return "retrieval.k must be an integer of at least 1 (the k the run was retrieved at), got " + got
}

// numberAsNumber turns a float64 that encoding/json decoded into the
// json.Number jsonTypeOf names.
func numberAsNumber(v any) any {
	if _, ok := v.(float64); ok {
		return json.Number("0")
	}
	return v
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
		// NoScores (both paths): the same error, the same case but for the
		// retrieved entries' scores, which are zero.
		var nc Case
		if nerr := (&CaseParser{StringsInLine: true, NoScores: true}).Parse(line, "f.jsonl", 1, &nc); fmt.Sprint(nerr) != fmt.Sprint(err) {
			t.Fatalf("%q: with NoScores %v, without %v", line, nerr, err)
		}
		var ngc Case
		if nerr := (&CaseParser{StringsInLine: true, NoScores: true, noFast: true}).Parse(line, "f.jsonl", 1, &ngc); fmt.Sprint(nerr) != fmt.Sprint(err) {
			t.Fatalf("%q: with NoScores (general scanner) %v, without %v", line, nerr, err)
		}
		if err == nil {
			want := vc
			want.Retrieved = slices.Clone(vc.Retrieved)
			for i := range want.Retrieved {
				want.Retrieved[i].Score = 0
			}
			for _, got := range []*Case{&nc, &ngc} {
				if !sameRef(toRef(got), toRef(&want)) {
					t.Fatalf("%q: with NoScores\n%+v\nwant\n%+v", line, *got, want)
				}
			}
		}
		// RetrievalK (check's reader), on both paths: a line refused without
		// it is refused for the same reason; an accepted line is refused
		// exactly when its retrieval.k is not what the reference takes, and
		// else decodes as without it.
		for _, noFast := range []bool{false, true} {
			var rc Case
			rerr := (&CaseParser{StringsInLine: true, NoScores: true, RetrievalK: true, noFast: noFast}).Parse(line, "f.jsonl", 1, &rc)
			want := errText(err)
			if err == nil {
				if msg := refRetrievalK(line); msg != "" {
					want = "f.jsonl:1: " + msg
				} else if rerr == nil && !sameRef(toRef(&rc), toRef(&nc)) {
					t.Fatalf("%q: with RetrievalK (general scanner only: %v)\n%+v\nwithout\n%+v", line, noFast, rc, nc)
				}
			}
			if got := errText(rerr); got != want {
				t.Fatalf("%q: with RetrievalK (general scanner only: %v) %s, want %s", line, noFast, got, want)
			}
		}
		// The fast path, when it takes the line, decodes it as the general
		// scanner does with StringsInLine (and reports nothing else).
		var fc Case
		if (&CaseParser{StringsInLine: true}).parseFast(line, "f.jsonl", 1, &fc) {
			var gc Case
			if err := (&CaseParser{StringsInLine: true, noFast: true}).Parse(line, "f.jsonl", 1, &gc); err != nil {
				t.Fatalf("%q: the fast path took a line the general scanner refuses: %v", line, err)
			}
			if !sameRef(toRef(&fc), toRef(&gc)) || fc.File != gc.File || fc.Line != gc.Line || !bytes.Equal(fc.Raw, gc.Raw) ||
				(fc.Gold == nil) != (gc.Gold == nil) || (fc.Relevant == nil) != (gc.Relevant == nil) {
				t.Fatalf("%q: fast path\n%+v\ngeneral\n%+v", line, fc, gc)
			}
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

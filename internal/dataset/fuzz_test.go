package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
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

// FuzzLoadKBJSONL checks the JSONL card reader: no panic, errors are *Error at
// an existing line, and accepted cards match encoding/json's reading.
func FuzzLoadKBJSONL(f *testing.F) {
	f.Add([]byte(`{"id":"en-a","locale":"en","title":"A","text":"alpha","extra":{"x":[1,2]}}` + "\n\n" + `{"id":"b","title":null}`))
	f.Add([]byte("\xEF\xBB\xBF{\"id\":\"a\"}\r\n{\"id\":\"a\"}"))
	f.Add([]byte(`{"id":12}`))
	f.Add([]byte(`{"id":"\u00e9","text":"\ud83d\ude00"}`))
	f.Add([]byte("{\"id\":\"x\",\"text\":\"a\xffb\"}\n[]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		kb := &KB{Path: "kb.jsonl"}
		err := kb.readJSONL(bytes.NewReader(data), "kb.jsonl")
		lines := bytes.Split(data, []byte("\n"))
		if err != nil {
			var de *Error
			if !errors.As(err, &de) || de.File != "kb.jsonl" || de.Line < 1 || de.Line > len(lines) {
				t.Fatalf("bad error %v", err)
			}
			return
		}
		i := 0
		for n, ln := range lines {
			ln = bytes.TrimSuffix(ln, []byte("\r"))
			if n == 0 {
				ln = bytes.TrimPrefix(ln, utf8BOM)
			}
			if isBlank(ln) {
				continue
			}
			var want struct {
				ID, Locale, Title, Text *string
			}
			var raw map[string]any
			if err := json.Unmarshal(ln, &raw); err != nil {
				t.Fatalf("line %d %q accepted but encoding/json says %v", n+1, ln, err)
			}
			if err := json.Unmarshal(ln, &want); err != nil {
				t.Fatalf("line %d %q: %v", n+1, ln, err)
			}
			if i >= len(kb.Cards) {
				t.Fatalf("line %d: no card", n+1)
			}
			c := kb.Cards[i]
			i++
			if c.Line != n+1 || c.ID != raw["id"] {
				t.Fatalf("line %d: card %+v, raw %v", n+1, c, raw)
			}
			for name, got := range map[string]string{"locale": c.Locale, "title": c.Title, "text": c.Text} {
				w, _ := raw[name].(string)
				if got != w {
					t.Fatalf("line %d: %s %q, want %q", n+1, name, got, w)
				}
			}
			if got, ok := kb.Card(c.ID); !ok || got != c {
				t.Fatalf("Card(%q) = %+v", c.ID, got)
			}
		}
		if i != len(kb.Cards) {
			t.Fatalf("%d cards for %d lines", len(kb.Cards), i)
		}
	})
}

// FuzzMarkdownCard checks front matter parsing: no panic, *Error on bad input,
// the file-name default, and a round trip through yaml.Marshal.
func FuzzMarkdownCard(f *testing.F) {
	f.Add([]byte("---\nid: en-reset-password\nlocale: en\ntitle: Reset your password\n---\nGo to settings.\n"))
	f.Add([]byte("\xEF\xBB\xBF---\r\nid: crlf\r\ntitle: \"T: x\"\r\n...\r\nbody\r\n"))
	f.Add([]byte("No front matter.\n---\n"))
	f.Add([]byte("---\nid: [a\n---\n"))
	f.Add([]byte("---\n- a\n---\n"))
	f.Add([]byte("---\nid: &a x\ntitle: *a\n---\n"))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("---"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseMarkdownCard("kb/name.md", data)
		if err != nil {
			var de *Error
			if !errors.As(err, &de) || de.File != "kb/name.md" || de.Line < 0 || de.Line > bytes.Count(normalizeNewlines(data), []byte("\n"))+1 {
				t.Fatalf("bad error %v", err)
			}
			return
		}
		if c.ID == "" || c.File != "kb/name.md" || c.Line < 1 {
			t.Fatalf("bad card %+v", c)
		}
		body := normalizeNewlines(bytes.TrimPrefix(data, utf8BOM))
		if first, _, _ := bytes.Cut(body, []byte("\n")); !isDelim(first, "---") {
			if c.ID != "name" || c.Text != string(body) || c.Locale != "" || c.Title != "" {
				t.Fatalf("card without front matter: %+v", c)
			}
		}
		if strings.Contains(c.Text, "\r") {
			t.Fatalf("CR left in text %q", c.Text)
		}
		if !utf8.ValidString(c.ID) || !utf8.ValidString(c.Locale) || !utf8.ValidString(c.Title) {
			return // yaml.Marshal would write !!binary
		}
		fm, err := yaml.Marshal(map[string]string{"id": c.ID, "locale": c.Locale, "title": c.Title})
		if err != nil {
			t.Fatal(err)
		}
		again := "---\n" + string(fm) + "---\n" + c.Text
		c2, err := ParseMarkdownCard("kb/name.md", []byte(again))
		if err != nil {
			t.Fatalf("round trip %q: %v", again, err)
		}
		if c2.ID != c.ID || c2.Locale != c.Locale || c2.Title != c.Title || c2.Text != c.Text {
			t.Fatalf("round trip %q:\n%+v\n%+v", again, c, c2)
		}
	})
}

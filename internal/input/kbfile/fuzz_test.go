package kbfile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// FuzzLoadKBJSONL checks the JSONL card reader: no panic, errors are *input.Error at
// an existing line, and accepted cards match encoding/json's reading.
func FuzzLoadKBJSONL(f *testing.F) {
	f.Add([]byte(`{"id":"en-a","locale":"en","title":"A","text":"alpha","extra":{"x":[1,2]}}` + "\n\n" + `{"id":"b","title":null}`))
	f.Add([]byte("\xEF\xBB\xBF{\"id\":\"a\"}\r\n{\"id\":\"a\"}"))
	f.Add([]byte(`{"id":12}`))
	f.Add([]byte(`{"id":"\u00e9","text":"\ud83d\ude00"}`))
	f.Add([]byte("{\"id\":\"x\",\"text\":\"a\xffb\"}\n[]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		kb := &KB{Path: "kb.jsonl"}
		err := kb.readJSONL(context.Background(), bytes.NewReader(data), "kb.jsonl")
		lines := bytes.Split(data, []byte("\n"))
		if err != nil {
			var de *input.Error
			if !errors.As(err, &de) || de.File != "kb.jsonl" || de.Line < 1 || de.Line > len(lines) {
				t.Fatalf("bad error %v", err)
			}
			return
		}
		i := 0
		for n, ln := range lines {
			ln = bytes.TrimSuffix(ln, []byte("\r"))
			if n == 0 {
				ln = bytes.TrimPrefix(ln, input.BOM)
			}
			if input.IsBlank(ln) {
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

// FuzzMarkdownCard checks front matter parsing: no panic, *input.Error on bad input,
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
			var de *input.Error
			if !errors.As(err, &de) || de.File != "kb/name.md" || de.Line < 0 || de.Line > bytes.Count(normalizeNewlines(data), []byte("\n"))+1 {
				t.Fatalf("bad error %v", err)
			}
			return
		}
		if c.ID == "" || c.File != "kb/name.md" || c.Line < 1 {
			t.Fatalf("bad card %+v", c)
		}
		body := normalizeNewlines(bytes.TrimPrefix(data, input.BOM))
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

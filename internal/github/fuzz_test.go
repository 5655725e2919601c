package github

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzEvent feeds arbitrary event payloads to the reader: it never panics, and a PR
// number it reports is positive and comes with a pull-request event.
func FuzzEvent(f *testing.F) {
	f.Add([]byte(prPayload(3, "a/b", "a/b")), "pull_request")
	f.Add([]byte(prPayload(4, "", "a/b")), "pull_request_target")
	f.Add([]byte(`{"issue":{"number":5,"pull_request":{}}}`), "issue_comment")
	f.Add([]byte(`{"number":-1,"pull_request":{"number":-1,"head":{"repo":null}}}`), "pull_request")
	f.Add([]byte(`{"pull_request":null}`), "pull_request")
	f.Fuzz(func(t *testing.T, payload []byte, name string) {
		ev, err := parseEvent(payload)
		if err != nil {
			if json.Valid(payload) && ev != nil {
				t.Fatal("an event with an error")
			}
			return
		}
		a := &Actions{InActions: true, EventName: name}
		a.applyEvent(ev)
		if a.PR < 0 {
			t.Fatalf("negative PR %d", a.PR)
		}
		if a.PR > 0 && name != "pull_request" && name != "pull_request_target" && name != "issue_comment" {
			t.Fatalf("PR %d from event %q", a.PR, name)
		}
		if a.ReadOnlyToken() && (!a.Fork || name != "pull_request") {
			t.Fatal("read-only token outside a fork pull_request")
		}
	})
}

// FuzzTruncate: the result fits the limit, stays valid UTF-8, and is unchanged when
// the input fits.
func FuzzTruncate(f *testing.F) {
	f.Add(Marker("k")+"\n<details>\nü\n", 12, "\nnote\n")
	f.Add("abc", 100, "")
	f.Add(strings.Repeat("é", 100), 7, "…")
	f.Fuzz(func(t *testing.T, md string, limit int, note string) {
		if !utf8.ValidString(md) || !utf8.ValidString(note) || limit < 0 || limit > 1<<20 {
			return
		}
		got := Truncate(md, limit, note)
		if len(got) > limit && len(md) > limit {
			t.Fatalf("len %d > limit %d", len(got), limit)
		}
		if len(md) <= limit && got != md {
			t.Fatal("a fitting text was changed")
		}
		if !utf8.ValidString(got) {
			t.Fatal("invalid UTF-8")
		}
	})
}

// FuzzRetryAfter: any header value gives a non-negative wait or none.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "7", "-1", "Mon, 30 Nov 2026 06:00:09 GMT", "99999999999999999999"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := parseRetryAfter(v, now)
		if d < 0 || (!ok && d != 0) {
			t.Fatalf("%q: %v %v", v, d, ok)
		}
	})
}

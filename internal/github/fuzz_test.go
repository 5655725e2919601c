package github

import (
	"encoding/json"
	"testing"
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

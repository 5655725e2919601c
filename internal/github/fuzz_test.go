package github

import (
	"bytes"
	"encoding/json"
	"strings"
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
	f.Add([]byte(`{"number":7,"pull_request":{"number":0,"head":{"repo":{"full_name":"A/B"}},"base":{"repo":{"full_name":"a/b"}}},"repository":{"default_branch":" main ","fork":true}}`), "pull_request")
	f.Add([]byte(`{"issue":{"number":5,"pull_request":null}}`), "issue_comment")
	f.Add([]byte(prPayload(8, "c/d", "a/b")), "pull_request_review")
	f.Add([]byte(prPayload(9, "a/b", "a/b")), "pull_request_review_comment")
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
		if a.PR > 0 && !prEvents[name] && name != "issue_comment" {
			t.Fatalf("PR %d from event %q", a.PR, name)
		}
		if a.ReadOnlyToken() && (!a.Fork || (name != "pull_request" && name != "pull_request_review" && name != "pull_request_review_comment")) {
			t.Fatal("read-only token outside a fork pull_request")
		}
		if want, ok := refEvent(payload, name); ok {
			got := &Actions{InActions: true, EventName: name, PR: a.PR, Fork: a.Fork, DefaultBranch: a.DefaultBranch, RepoFork: a.RepoFork}
			if *got != *want {
				t.Fatalf("read %+v, the payload says %+v", *got, *want)
			}
		}
	})
}

// prEvents are the events whose payload carries the pull request.
var prEvents = map[string]bool{"pull_request": true, "pull_request_target": true, "pull_request_review": true, "pull_request_review_comment": true}

// refEvent is FuzzEvent's reference: the payload decoded as a map, the pull
// request's number (else the payload's), its fork status (the head
// repository missing or another than the base), or an issue comment's PR;
// the repository's default branch and fork flag. False when it does not
// apply: a key that differs from a known one only in case (GitHub writes
// them in lower case; encoding/json's field match folds case).
func refEvent(payload []byte, name string) (*Actions, bool) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var ev map[string]any
	if dec.Decode(&ev) != nil || ev == nil {
		return nil, false
	}
	known := []string{"number", "pull_request", "head", "sha", "repo", "full_name", "base", "issue", "repository", "default_branch", "fork"}
	folded := false
	var walk func(v any)
	walk = func(v any) {
		if m, ok := v.(map[string]any); ok {
			for k, x := range m {
				for _, n := range known {
					if k != n && strings.EqualFold(k, n) {
						folded = true
					}
				}
				walk(x)
			}
		}
	}
	walk(ev)
	if folded {
		return nil, false
	}
	obj := func(m map[string]any, k string) map[string]any { x, _ := m[k].(map[string]any); return x }
	str := func(m map[string]any, k string) string { x, _ := m[k].(string); return x }
	num := func(m map[string]any, k string) int {
		x, _ := m[k].(json.Number)
		n, _ := x.Int64()
		return int(n)
	}
	a := &Actions{InActions: true, EventName: name}
	if repo := obj(ev, "repository"); repo != nil {
		a.DefaultBranch = strings.TrimSpace(str(repo, "default_branch"))
		a.RepoFork, _ = repo["fork"].(bool)
	}
	switch {
	case prEvents[name]:
		pr := obj(ev, "pull_request")
		if pr == nil {
			break
		}
		a.PR = num(pr, "number")
		if a.PR == 0 {
			a.PR = num(ev, "number")
		}
		a.PR = max(a.PR, 0)
		head := str(obj(obj(pr, "head"), "repo"), "full_name")
		base := str(obj(obj(pr, "base"), "repo"), "full_name")
		a.Fork = head == "" || !strings.EqualFold(head, base)
	case name == "issue_comment":
		if is := obj(ev, "issue"); is != nil && is["pull_request"] != nil && num(is, "number") > 0 {
			a.PR = num(is, "number")
		}
	}
	return a, true
}

// Package codequality writes check's integrity problems as a GitLab Code
// Quality report (check --codequality): the code-climate JSON subset GitLab
// reads ("Code Quality" in GitLab's CI documentation: an array of issues, each
// with description, check_name, fingerprint, severity, location.path and
// location.lines.begin), so that a merge request's Code Quality widget and
// its diff show each gold id that is not a card of the knowledge base.
//
// One issue per problem the result lists (the first gate.DefaultMaxProblems,
// file order), severity blocker (the integrity gate blocks the merge); more
// problems than that are one more issue that counts them. The fingerprint is
// the SHA-256 of the check name, path, case id and gold id: stable when lines
// move, so GitLab tells new problems from fixed ones between the target branch
// and the merge request. No arithmetic and no words of its own: the words are
// checkreport.ProblemReason's.
package codequality

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/relpath"
	"github.com/retrieval-gate/retrieval-gate/internal/report/checkreport"
)

// Issue is one Code Quality issue. Fields in the order GitLab documents them.
type Issue struct {
	Description string   `json:"description"`
	CheckName   string   `json:"check_name"`
	Fingerprint string   `json:"fingerprint"`
	Severity    string   `json:"severity"`
	Location    Location `json:"location"`
}

// Location is an issue's file and first line.
type Location struct {
	Path  string `json:"path"`
	Lines Lines  `json:"lines"`
}

// Lines holds the issue's first line.
type Lines struct {
	Begin int `json:"begin"`
}

// MaxIDBytes bounds a case id and a gold id in an issue's description (a
// longer one is cut at a character boundary, "…" marking the cut; the
// fingerprint is of the whole ids, and the JSON report has them whole), so
// the report of check's listed problems (gate.DefaultMaxProblems at most)
// stays within a few MiB however long the ids are.
const MaxIDBytes = 256

// Issues are the Code Quality issues of check's result; casesPath is the
// cases file as given (the location of the count of problems not listed).
// Every path is written relative to root, the repository's root (RelPath),
// and the fingerprint is computed from that path, so it is the same on
// runners whose build directories differ; root "" leaves the paths as given.
func Issues(r *gate.Result, casesPath, root string) []Issue {
	out := make([]Issue, 0, len(r.Integrity.Problems)+1)
	for _, p := range r.Integrity.Problems {
		path := relpath.Rel(root, p.File)
		name := "retrieval-gate/" + string(p.Kind)
		sum := sha256.Sum256([]byte(name + "\x00" + path + "\x00" + p.CaseID + "\x00" + p.GoldID))
		out = append(out, Issue{
			Description: "retrieval-gate: " + format.CaseGold(format.CutBytes(p.CaseID, MaxIDBytes), format.CutBytes(p.GoldID, MaxIDBytes)) + ": " + checkreport.ProblemReason(p.Kind),
			CheckName:   name,
			Fingerprint: hex.EncodeToString(sum[:]),
			Severity:    "blocker",
			Location:    Location{Path: path, Lines: Lines{Begin: max(p.Line, 1)}},
		})
	}
	if rest := r.Integrity.ProblemsTotal - int64(len(r.Integrity.Problems)); rest > 0 {
		path := relpath.Rel(root, casesPath)
		sum := sha256.Sum256([]byte("retrieval-gate/more_problems\x00" + path))
		out = append(out, Issue{
			Description: fmt.Sprintf("retrieval-gate: %s not listed (the first %d are)", format.Count(rest, "more integrity problem", "more integrity problems"), len(r.Integrity.Problems)),
			CheckName:   "retrieval-gate/more_problems", Fingerprint: hex.EncodeToString(sum[:]), Severity: "blocker",
			Location: Location{Path: path, Lines: Lines{Begin: 1}},
		})
	}
	return out
}

// Write writes issues as the report's JSON array (an empty array when there
// are none: GitLab then shows no problem).
func Write(w io.Writer, issues []Issue) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(issues)
}

// Package publish owns everything retrieval-gate hands to GitHub at the end of a
// command: the sticky-comment marker and keys, the size limits and the fitting of
// a report into them, the job summary, the step outputs, the annotations, and the
// upsert of the PR comment (only the token's own comments are ever edited).
// Commands build a Publication; a Publisher, given the process environment and a
// GitHub client factory, publishes it. Nothing here changes an exit code:
// failures become warnings.
package publish

import (
	"fmt"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/github"
)

const markerPrefix = format.CommentMarkerPrefix

// DefaultKey is the comment key of check (format.DefaultCommentKey).
const DefaultKey = format.DefaultCommentKey

// Marker is the hidden first line that identifies the comment of one key
// (format.CommentMarker).
func Marker(key string) string { return format.CommentMarker(key) }

// ValidKey reports whether key is 1 to 100 characters of [A-Za-z0-9._/-].
func ValidKey(key string) bool { return format.ValidCommentKey(key) }

// MarkerOf is the marker on the first non-blank line of md, or "" when md does not
// start with one.
func MarkerOf(md string) string {
	line, _, _ := strings.Cut(strings.TrimLeft(md, " \t\r\n"), "\n")
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, markerPrefix) && strings.HasSuffix(line, " -->") && !strings.Contains(line[len(markerPrefix):len(line)-4], "-->") {
		return line
	}
	return ""
}

// hasMarker reports whether a comment body starts with marker (whole line).
func hasMarker(body, marker string) bool {
	return MarkerOf(body) == marker
}

// keyOf is the key a marker names (the marker itself when it names none).
func keyOf(marker string) string {
	if k, ok := strings.CutPrefix(marker, markerPrefix); ok {
		return strings.TrimSuffix(k, " -->")
	}
	return marker
}

// incompleteWhy says that a listing stopped at its bound: the "pull request"
// or "merge request" (on), its "comments" or "notes" (many), one of them (one).
func incompleteWhy(e *github.IncompleteError, on, many, one string) string {
	return fmt.Sprintf("the %s has more than %d %s, and retrieval-gate looks for its %s among the oldest %d only (%d pages of %d)",
		on, e.Read, many, one, e.Read, e.Pages, e.PerPage)
}

// Package publish owns everything retrieval-gate hands to GitHub at the end of a
// command: the sticky-comment marker and keys, the size limits and the fitting of
// a report into them, the job summary, the step outputs, the annotations, and the
// upsert of the PR comment (only the token's own comments are ever edited).
// Commands build a Publication; a Publisher, given the process environment and a
// GitHub client factory, publishes it. Nothing here changes an exit code:
// failures become warnings.
package publish

import (
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
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

// Package publish owns everything retrieval-gate hands to GitHub at the end of a
// command: the sticky-comment marker and keys, the size limits and the fitting of
// a report into them, the job summary, the step outputs, the annotations, and the
// upsert of the PR comment (only the token's own comments are ever edited).
// Commands build a Publication; a Publisher, given the process environment and a
// GitHub client factory, publishes it. Nothing here changes an exit code:
// failures become warnings.
package publish

import "strings"

const markerPrefix = "<!-- retrieval-gate:"

// DefaultKey is the comment key of check; other commands have their own
// (cli: one key per command, so their comments never collide).
const DefaultKey = "default"

// Marker is the hidden first line that identifies the comment of one key. A key
// that is not valid (ValidKey) has every other character replaced by "_", and ""
// is DefaultKey, so the marker is always one HTML comment.
func Marker(key string) string { return markerPrefix + cleanKey(key) + " -->" }

// ValidKey reports whether key is 1 to 100 characters of [A-Za-z0-9._/-].
func ValidKey(key string) bool {
	return key != "" && len(key) <= 100 && cleanKey(key) == key
}

func cleanKey(key string) string {
	if key == "" {
		return DefaultKey
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '/', r == '-':
			return r
		}
		return '_'
	}, key)
}

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

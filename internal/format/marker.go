package format

import "strings"

// CommentMarkerPrefix starts the hidden first line of every comment
// retrieval-gate writes (CommentMarker).
const CommentMarkerPrefix = "<!-- retrieval-gate:"

// DefaultCommentKey is the comment key of check; other commands have their own
// (one key per command, so their comments never collide).
const DefaultCommentKey = "default"

// CommentMarker is the hidden first line that identifies the comment of one
// key. A key that is not valid (ValidCommentKey) has every other character
// replaced by "_", and "" is DefaultCommentKey, so the marker is always one
// HTML comment. Reports receive it (they do not import the publisher); the
// publisher finds its own comments by it.
func CommentMarker(key string) string { return CommentMarkerPrefix + cleanCommentKey(key) + " -->" }

// ValidCommentKey reports whether key is 1 to 100 characters of [A-Za-z0-9._/-].
func ValidCommentKey(key string) bool {
	return key != "" && len(key) <= 100 && cleanCommentKey(key) == key
}

func cleanCommentKey(key string) string {
	if key == "" {
		return DefaultCommentKey
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '/', r == '-':
			return r
		}
		return '_'
	}, key)
}

package casefile

import (
	"regexp"
	"strings"
)

// ParentFromID derives a card identity from a chunk id: the part before the
// last occurrence of sep ("card-12#chunk-3" with "#" is "card-12"). An id without
// sep, or with sep only at its start, is its own identity.
func ParentFromID(id, sep string) string {
	if sep == "" {
		return id
	}
	if i := strings.LastIndex(id, sep); i > 0 {
		return id[:i]
	}
	return id
}

// ParentFromIDRegexp derives a card identity with a regular expression: the
// first capture group of its leftmost match (the whole match when it has no
// group); an id that does not match is its own identity.
func ParentFromIDRegexp(id string, re *regexp.Regexp) string {
	m := re.FindStringSubmatchIndex(id)
	switch {
	case m == nil:
		return id
	case len(m) >= 4 && m[2] >= 0 && m[3] > m[2]:
		return id[m[2]:m[3]]
	case m[1] > m[0]:
		return id[m[0]:m[1]]
	}
	return id
}

// TopKIdentities appends to dst the first k distinct card identities of ranked,
// best first: duplicates are removed by first occurrence before the top-k cut
// (several chunks of one parent card count once, at the rank of the best chunk).
// Empty identities are skipped. k <= 0 gives none.
func TopKIdentities(dst []string, ranked []string, k int) []string {
	start := len(dst)
	for _, id := range ranked {
		if len(dst)-start >= k {
			break
		}
		if id == "" || hasID(dst[start:], id) {
			continue
		}
		dst = append(dst, id)
	}
	return dst
}

// hasID reports whether ids, all non-empty, holds id, non-empty. The last
// bytes are compared before the strings: ids of one length mostly differ
// there (card-1007, card-1008), and most pairs are told apart without a call
// of the runtime's comparison.
func hasID(ids []string, id string) bool {
	last := id[len(id)-1]
	for _, x := range ids {
		if len(x) == len(id) && x[len(x)-1] == last && x == id {
			return true
		}
	}
	return false
}

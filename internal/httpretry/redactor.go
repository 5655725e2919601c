package httpretry

import "strings"

// Redactor is RedactText with its secrets prepared once, for the many texts
// of one run that reach an output (every reason of a judge's answers):
// Text(msg) is RedactText(msg, secrets...). RedactText prepares the patterns
// of its secrets anew at each call and walks every place of the text that
// could start one (some 100 µs for a reason of 150 bytes and three keys: a
// judge's batch of 100,000 answers would spend seconds on it); a Redactor
// prepares them once and skips each of RedactText's steps for a text in
// which that step can find nothing, which one pass over its bytes tells
// (plainForSecrets, plainForShapes). It is safe for concurrent use.
type Redactor struct {
	pats []pattern
	// pieces holds, for each length n of 4 to 8, the shortest pieces of the
	// secrets and of their base64 cores that Redact removes, at most their
	// first 8 bytes (ASCII letters in lower case), packed into a uint64.
	pieces [minFragment + 1]map[uint64]struct{}
	// seen marks the pieces by a hash of each (pieceHash): a run whose bit
	// is not set is no piece, without a look in the map.
	seen *[1 << 16 / 64]uint64
	// plus: a secret holds a space, which Redact reads "+" as.
	plus bool
	// lineEnd: a secret holds a line end (a PEM key's), which Redact
	// matches as it is where a text's line end may also be a wrap.
	lineEnd bool
}

// NewRedactor is the Redactor of secrets (Redact's: the process's keys and
// tokens, the credentials of the server URLs given).
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{pats: secretPatterns(secrets), seen: new([1 << 16 / 64]uint64)}
	for _, p := range r.pats {
		n := min(p.min, minFragment)
		if r.pieces[n] == nil {
			r.pieces[n] = map[uint64]struct{}{}
		}
		var run uint64
		for j := range len(p.s) {
			run = run<<8 | uint64(lower(p.s[j]))
			if j >= n-1 {
				r.pieces[n][run&mask(n)] = struct{}{}
				h := pieceHash(run & mask(n))
				r.seen[h/64] |= 1 << (h % 64)
			}
		}
		r.plus = r.plus || strings.IndexByte(p.s, ' ') >= 0
		r.lineEnd = r.lineEnd || strings.ContainsAny(p.s, "\r\n")
	}
	return r
}

// pieceHash is a run's bit in Redactor.seen.
func pieceHash(run uint64) uint64 { return run * 0x9E3779B97F4A7C15 >> 48 }

// mask keeps the last n bytes of a packed run.
func mask(n int) uint64 {
	if n >= 8 {
		return ^uint64(0)
	}
	return 1<<(8*n) - 1
}

// Text is RedactText(msg, secrets...) of the Redactor's secrets.
func (r *Redactor) Text(msg string) string {
	if !r.plainForSecrets(msg) {
		msg = redactWith(msg, r.pats)
	}
	msg = RedactURLsIn(msg) // at once without "://"
	if !plainForShapes(msg) {
		msg = redactKeyShapes(msg)
	}
	return msg
}

// plainForSecrets reports whether Redact of the Redactor's secrets leaves
// msg as it is for certain: msg holds none of their pieces as written (each
// at least 4 bytes, the whole of a shorter secret: a match holds the first
// min(n, 8) bytes of a piece of n, in any letter case), and no escape Redact
// reads: "%" and two hex digits, a backslash (JSON's), "&" with ";" within
// its next 11 bytes (HTML's character references), "+" when a secret holds a
// space, a line end when a secret holds one; nor, once msg has a line end,
// any of those pieces with the line
// ends and the blanks after them left out (a wrap, which Redact matches
// through: wrapAt).
func (r *Redactor) plainForSecrets(msg string) bool {
	if len(r.pats) == 0 {
		return true
	}
	var run uint64  // the last 8 bytes, ASCII letters in lower case
	var flat uint64 // run without the line ends and the blanks after them
	flatLen, wraps, afterEnd := 0, false, false
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		switch c {
		case '%':
			if i+2 < len(msg) && isHex(msg[i+1]) && isHex(msg[i+2]) {
				return false
			}
		case '\\':
			return false
		case '&':
			if strings.IndexByte(msg[i:min(len(msg), i+12)], ';') >= 0 {
				return false
			}
		case '+':
			if r.plus {
				return false
			}
		}
		run = run<<8 | uint64(lower(c))
		switch {
		case c == '\n' || c == '\r':
			if r.lineEnd {
				// Which line ends are the secret's and which a wrap's is
				// Redact's to find: no quick answer.
				return false
			}
			wraps, afterEnd = true, true
		case afterEnd && (c == ' ' || c == '\t'):
		default:
			afterEnd = false
			flat = flat<<8 | uint64(lower(c))
			flatLen++
		}
		if r.holdsPiece(run, i+1) || wraps && r.holdsPiece(flat, flatLen) {
			return false
		}
	}
	return true
}

// holdsPiece reports whether run (the last 8 of its have bytes) ends with a
// piece of a secret.
func (r *Redactor) holdsPiece(run uint64, have int) bool {
	for n := 4; n <= minFragment && n <= have; n++ {
		if r.pieces[n] == nil {
			continue
		}
		if h := pieceHash(run & mask(n)); r.seen[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		if _, ok := r.pieces[n][run&mask(n)]; ok {
			return true
		}
	}
	return false
}

// The words before a credential of credentialAfter's first form, packed as
// the last 5 or 6 bytes of a text are in plainForShapes.
const (
	packedBasic  = uint64('b')<<32 | uint64('a')<<24 | uint64('s')<<16 | uint64('i')<<8 | uint64('c')
	packedBearer = uint64('b')<<40 | uint64('e')<<32 | uint64('a')<<24 | uint64('r')<<16 | uint64('e')<<8 | uint64('r')
)

// keyPrefixes are the starts of keyShapes' credentials, as its expression
// writes them (in this letter case only).
var keyPrefixes = []string{"sk-", "AIza", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-"}

// plainForShapes reports whether redactKeyShapes leaves msg as it is for
// certain: msg holds none of keyPrefixes, nor "Bearer" or "Basic" in any
// letter case (credentialAfter's (?i) folds the "s" of "basic" with "ſ",
// U+017F, as well: no other letter of the two words has a fold outside
// ASCII), nor "?" or "&" with an "=" (a query parameter).
func plainForShapes(msg string) bool {
	var run uint64 // the last 8 bytes, ASCII letters in lower case
	query, equals := false, false
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		switch c {
		case '?', '&':
			query = true
		case '=':
			equals = true
		}
		run = run<<8 | uint64(lower(c))
		if i >= 4 && run&mask(5) == packedBasic || i >= 5 && run&mask(6) == packedBearer {
			return false
		}
	}
	if query && equals || strings.Contains(msg, "ſ") {
		return false
	}
	for _, p := range keyPrefixes {
		if strings.Contains(msg, p) {
			return false
		}
	}
	return true
}

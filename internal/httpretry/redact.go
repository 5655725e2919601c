package httpretry

import (
	"encoding/base64"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Redacted replaces a secret in messages.
const Redacted = "***"

// minFragment is the shortest piece of a secret Redact removes on its own: a
// server's answer cut at a cap (ReadSnippet, a message's 300 characters) may
// end inside a secret, and a server may echo a key's start or end
// ("sk-proj-abc…xyz"); any 8 of its characters in a row are removed. 8: a
// shorter piece of a random key gives away too little to matter (7 of a
// key's characters leave the rest to guess), a longer one is worth
// removing, and a fragment of 8 still matches no ordinary word of a text by
// chance; a line break that wraps the secret inside a fragment does not end
// it (see wrapAt).
const minFragment = 8

// minBase64Fragment is the shortest piece of a secret's base64 core Redact
// removes: 11 characters (66 bits) are the fewest that can carry 8 of the
// secret's bytes, so a truncated Basic credential ("dXNlcjpzay1w…", a
// snippet cut at its cap) loses the piece that would give minFragment of
// the secret away, as the secret's own text does.
const minBase64Fragment = 11

// maxWrapIndent is the most blanks a line-wrapped secret's next line may
// start with (an indented log, a folded header): a bound, so that matching
// through wraps stays linear in the text.
const maxWrapIndent = 64

// Redact removes every secret from msg, and every run of at least 8 of a
// secret's consecutive characters (all of a shorter secret), even when a line
// break wraps it (a line end, "\r\n" or JSON's "\n" escape, then at most
// maxWrapIndent spaces or tabs: "sk-proj-ABCD\n  EFGH…" is one piece, so the
// 7 characters left on either side of a wrap go with it), in whatever form
// a server may echo it (issue: a token GitLab wrote as "glpat-SECRET\u0074oken"
// got past a match of the plain and json.Marshal forms):
//
//   - as given, in any letter case (a server may upper-case what it quotes);
//   - each character possibly escaped, and the escapes mixed: JSON's \uXXXX
//     (any hex case, and the backslash doubled as in JSON held in a JSON
//     string) and its short escapes (\/ for a slash, as PHP and others write
//     it); URL percent-encoding (%XX in any case, "+" for a space, encoded
//     twice as %25XX); HTML character references (&#NN; &#xHH; &amp; &lt;
//     &gt; &quot; &apos;) of an HTML error page;
//   - base64 (standard or URL alphabet), at any alignment inside a longer
//     encoded text, as in the Basic credentials "user:SECRET" of an
//     Authorization header a server echoes (RFC 7617): the part of the
//     encoding that only the secret's bytes determine, and every run of at
//     least minBase64Fragment of its characters (a credential cut short).
//
// Secrets shorter than 4 bytes are ignored (they would blank ordinary words).
func Redact(msg string, secrets ...string) string {
	return redactWith(msg, secretPatterns(secrets))
}

// secretPatterns is the patterns Redact looks for of secrets: each secret's (at
// least 4 bytes once trimmed) and its base64 cores'.
func secretPatterns(secrets []string) []pattern {
	var pats []pattern
	for _, s := range secrets {
		s = strings.TrimSpace(s)
		if len(s) < 4 {
			continue
		}
		pats = append(pats, newPattern(s, min(len(s), minFragment), false))
		for _, b := range base64Cores(s) {
			pats = append(pats, newPattern(b, min(len(b), minBase64Fragment), true))
		}
	}
	return pats
}

// redactWith is Redact with the patterns of its secrets (secretPatterns).
func redactWith(msg string, pats []pattern) string {
	if len(pats) == 0 {
		return msg
	}
	var out strings.Builder
	last := 0 // msg[last:i] is not yet written
	for i := 0; i < len(msg); {
		end := 0
		for k := range pats {
			end = max(end, pats[k].longestAt(msg, i))
		}
		if end == 0 {
			i++
			continue
		}
		out.WriteString(msg[last:i])
		out.WriteString(Redacted)
		i, last = end, end
	}
	if last == 0 {
		return msg
	}
	out.WriteString(msg[last:])
	return out.String()
}

// pattern is one secret Redact looks for: any run of at least min of its
// consecutive bytes, matched through the escapes (literal: byte for byte).
type pattern struct {
	s       string
	min     int
	literal bool
	first   [256]bool  // the bytes a match may start with
	starts  [256][]int // the offsets of s a match starting with a byte may start at
	all     []int      // every offset a match may start at (an escape's first byte)
}

func newPattern(s string, minRun int, literal bool) pattern {
	p := pattern{s: s, min: minRun, literal: literal}
	for j := 0; j+minRun <= len(s); j++ {
		if j > 0 && s[j] == ' ' {
			continue // a piece starts after the scheme word's space ("Bearer KEY")
		}
		p.all = append(p.all, j)
		if literal {
			p.first[s[j]] = true
			p.starts[s[j]] = append(p.starts[s[j]], j)
			continue
		}
		lo, up := lower(s[j]), upper(s[j])
		p.first[lo], p.first[up] = true, true
		p.starts[lo] = append(p.starts[lo], j)
		if up != lo {
			p.starts[up] = append(p.starts[up], j)
		}
	}
	if !literal {
		for _, c := range "%\\&+" {
			p.first[c] = true
			p.starts[c] = p.all
		}
	}
	return p
}

// longestAt is the end of the longest run of p's consecutive bytes (at least
// p.min of them) that msg holds at i, 0 when none.
func (p *pattern) longestAt(msg string, i int) int {
	if !p.first[msg[i]] {
		return 0
	}
	best := 0
	for _, j := range p.starts[msg[i]] {
		var seen map[[2]int]bool
		p.walk(msg, i, j, j, &best, &seen)
	}
	return best
}

// walk matches p.s from k (the run began at j) against msg from at, trying
// every reading of an ambiguous character ("%41" is "%41" in a secret holding
// it, "A" percent-encoded in one that does not), and raises best to the end
// of every qualifying run. seen holds the places of a branch already walked
// (a run of backslashes reads as escaped backslashes or as themselves: the
// readings would multiply).
func (p *pattern) walk(msg string, at, k, j int, best *int, seen *map[[2]int]bool) {
	wrapped := false // the last step skipped a wrap: a run does not end in one
	for {
		if !wrapped && at > *best && k > j && (k-j == len(p.s) || k-j-spaces(p.s[j:k]) >= p.min) {
			*best = at
		}
		if k == len(p.s) || at == len(msg) {
			return
		}
		if k > j && !wrapped && !blankByte(p.s[k]) {
			if w := wrapAt(msg, at); w > 0 {
				at, wrapped = at+w, true
				continue
			}
		}
		wrapped = false
		if p.literal {
			if msg[at] != p.s[k] {
				return
			}
			at, k = at+1, k+1
			continue
		}
		var alts [3]step
		n := matches(msg, at, p.s, k, &alts)
		if n == 0 {
			return
		}
		if n > 1 {
			if *seen == nil {
				*seen = map[[2]int]bool{}
			}
			if (*seen)[[2]int{at, k}] {
				return
			}
			(*seen)[[2]int{at, k}] = true
			for _, a := range alts[1:n] {
				p.walk(msg, at+a.n, k+a.adv, j, best, seen)
			}
		}
		at, k = at+alts[0].n, k+alts[0].adv
	}
}

// wrapAt is the length of the line wrap msg holds at i, 0 when none: a line
// end ("\n", "\r\n", "\r", or JSON's escapes of them) and at most
// maxWrapIndent spaces or tabs.
func wrapAt(msg string, i int) int {
	n := 0
	for _, end := range wrapEnds {
		if strings.HasPrefix(msg[i:], end) {
			n = len(end)
			break
		}
	}
	if n == 0 {
		return 0
	}
	for m := 0; m < maxWrapIndent && i+n < len(msg) && (msg[i+n] == ' ' || msg[i+n] == '\t'); m++ {
		n++
	}
	return n
}

// wrapEnds are the line ends wrapAt reads, the longest first.
var wrapEnds = []string{`\r\n`, "\r\n", `\n`, `\r`, "\n", "\r"}

// blankByte: a line end, a space or a tab, which a secret may hold itself
// (a PEM key's lines, "Bearer KEY"): there it is matched, not skipped as a
// wrap.
func blankByte(c byte) bool { return c == '\n' || c == '\r' || c == ' ' || c == '\t' }

// step is one reading of a character of msg: the bytes of msg it takes and
// of the secret it matches.
type step struct{ n, adv int }

// matches writes into out the readings of msg at i that match the secret's
// bytes at s[k:]: the character as given (any ASCII case) or escaped; it
// returns their number.
func matches(msg string, i int, s string, k int, out *[3]step) int {
	n := 0
	c := msg[i]
	if lower(c) == lower(s[k]) {
		out[n] = step{1, 1}
		n++
	}
	switch c {
	case '+':
		if s[k] == ' ' {
			out[n] = step{1, 1}
			n++
		}
	case '%':
		// %XX, and %25XX (encoded twice).
		if i+2 < len(msg) && isHex(msg[i+1]) && isHex(msg[i+2]) {
			v, _ := strconv.ParseUint(msg[i+1:i+3], 16, 8)
			if byte(v) == s[k] {
				out[n] = step{3, 1}
				n++
			}
			if v == '%' && i+4 < len(msg) && isHex(msg[i+3]) && isHex(msg[i+4]) {
				v, _ = strconv.ParseUint(msg[i+3:i+5], 16, 8)
				if byte(v) == s[k] {
					out[n] = step{5, 1}
					n++
				}
			}
		}
	case '\\':
		if c, adv := jsonEscape(msg, i, s, k); c > 0 {
			out[n] = step{c, adv}
			n++
		}
	case '&':
		if c, adv := htmlReference(msg, i, s, k); c > 0 {
			out[n] = step{c, adv}
			n++
		}
	}
	return n
}

// jsonEscape matches a JSON escape of msg at i (its backslash possibly
// doubled, as in JSON held in a JSON string) against s[k:].
func jsonEscape(msg string, i int, s string, k int) (int, int) {
	j := i
	for j < len(msg) && msg[j] == '\\' {
		j++
	}
	if j == len(msg) {
		return 0, 0
	}
	if msg[j] == 'u' && j+5 <= len(msg) {
		v, err := strconv.ParseUint(msg[j+1:j+5], 16, 16)
		if err != nil {
			return 0, 0
		}
		r, n := rune(v), j+5-i
		if r >= 0xD800 && r < 0xDC00 { // a surrogate pair
			rest := msg[i+n:]
			t := strings.TrimLeft(rest, `\`)
			if strings.HasPrefix(t, "u") && len(t) >= 5 {
				if lo, err := strconv.ParseUint(t[1:5], 16, 16); err == nil && lo >= 0xDC00 && lo < 0xE000 {
					r = 0x10000 + (r-0xD800)<<10 + (rune(lo) - 0xDC00)
					n += len(rest) - len(t) + 5
				}
			}
		}
		if m := matchRune(r, s, k); m > 0 {
			return n, m
		}
		return 0, 0
	}
	if e, ok := jsonShort[msg[j]]; ok && e == s[k] {
		return j + 1 - i, 1
	}
	if j-i >= 2 && s[k] == '\\' { // an escaped backslash
		return 2, 1
	}
	return 0, 0
}

// htmlReference matches an HTML character reference of msg at i against
// s[k:].
func htmlReference(msg string, i int, s string, k int) (int, int) {
	semi := strings.IndexByte(msg[i:min(len(msg), i+12)], ';')
	if semi < 0 {
		return 0, 0
	}
	ref := msg[i+1 : i+semi]
	var r rune = -1
	switch {
	case strings.HasPrefix(ref, "#x") || strings.HasPrefix(ref, "#X"):
		if v, err := strconv.ParseUint(ref[2:], 16, 21); err == nil {
			r = rune(v) // at most 21 bits (ParseUint's bitSize): every code point
		}
	case strings.HasPrefix(ref, "#"):
		if v, err := strconv.ParseUint(ref[1:], 10, 21); err == nil {
			r = rune(v) // at most 21 bits (ParseUint's bitSize): every code point
		}
	default:
		if v, ok := htmlNamed[strings.ToLower(ref)]; ok {
			r = v
		}
	}
	if m := matchRune(r, s, k); r >= 0 && m > 0 {
		return semi + 1, m
	}
	return 0, 0
}

// jsonShort are JSON's two-character escapes (RFC 8259, section 7).
var jsonShort = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// htmlNamed are the character references an HTML page writes for the
// characters a token may hold.
var htmlNamed = map[string]rune{"amp": '&', "lt": '<', "gt": '>', "quot": '"', "apos": '\'', "sol": '/', "plus": '+', "equals": '=', "colon": ':'}

// matchRune is the number of bytes of s at k that r's UTF-8 encoding matches
// (any ASCII case), 0 when it does not.
func matchRune(r rune, s string, k int) int {
	if r < 0 || r > utf8.MaxRune {
		return 0
	}
	var b [utf8.UTFMax]byte
	n := utf8.EncodeRune(b[:], r)
	if k+n > len(s) {
		return 0
	}
	for x := range n {
		if lower(b[x]) != lower(s[k+x]) {
			return 0
		}
	}
	return n
}

// spaces counts the white space in s: a piece of "Bearer KEY" counts only
// its other characters.
func spaces(s string) int {
	return len(s) - len(strings.Join(strings.Fields(s), ""))
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= lower(c) && lower(c) <= 'f'
}

// base64Cores are the parts of s's base64 encodings that its bytes alone
// determine, at each of the three alignments it may have inside a longer
// encoded text ("user:" before it), in both alphabets (RFC 4648, sections 4
// and 5). A secret too short to have a core of 12 characters has none.
func base64Cores(s string) []string {
	var out []string
	for a := range 3 {
		full := base64.StdEncoding.EncodeToString(append(make([]byte, a), s...))
		start := 0
		if a > 0 {
			start = 4 // the first group holds the bytes before s
		}
		end := (a + len(s)) / 3 * 4 // the last group may hold the bytes after s
		if end-start < 12 {
			continue
		}
		core := full[start:end]
		out = append(out, core)
		if u := strings.NewReplacer("+", "-", "/", "_").Replace(core); u != core {
			out = append(out, u)
		}
	}
	return out
}

// URLSecrets are the credentials a URL carries: its user name and password
// (which Go's client sends as Basic credentials), the value of every query
// parameter whose name says key, token, secret, auth, password (pass, pwd),
// credential or signature (a name that merely contains one, "passage", is
// redacted too: an error loses a value, never shows a secret) (Gemini's API accepts its key as the "key" query parameter besides the
// x-goog-api-key header: ai.google.dev/gemini-api/docs/api-key), and a
// resumable upload's session id, "upload_id" (the URL Gemini's Files API
// answers its upload start with: Google's resumable uploads take the session
// URI as their authentication, "can be used by anyone to upload data" while
// it lasts, cloud.google.com/storage/docs/performing-resumable-uploads).
func URLSecrets(raw string) []string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Host == "" && strings.Contains(raw, "@")) {
		// Refused, or read as something else than a server's URL
		// ("user:pass@host:1" parses as scheme "user" and an opaque rest).
		return rawURLSecrets(strings.TrimSpace(raw))
	}
	var out []string
	if u.User != nil {
		// A user name alone is the credential (https://TOKEN@host); beside a
		// password it is a name ("oauth2", "x-access-token").
		if p, ok := u.User.Password(); ok {
			out = append(out, p, u.User.Username()+":"+p)
		} else {
			out = append(out, u.User.Username())
		}
	}
	for name, vs := range u.Query() {
		if credentialParam(name) {
			out = append(out, vs...)
		}
	}
	return out
}

// rawURLSecrets are the credentials of a URL url.Parse refuses (a bad port,
// a bad escape, a missing bracket, no scheme), which messages would otherwise
// show as given: the user information of its authority (what precedes its
// last "@" before the path, as a client splits it), the password alone too,
// and the values of its credential query parameters, each as written and
// unescaped.
func rawURLSecrets(raw string) []string {
	rest := raw
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	auth := rest
	if i := strings.IndexAny(auth, "/?#"); i >= 0 {
		auth = auth[:i]
	}
	var out []string
	add := func(v string) {
		if v == "" {
			return
		}
		out = append(out, v)
		if u, err := url.PathUnescape(v); err == nil && u != v {
			out = append(out, u)
		}
	}
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		info := auth[:at]
		if _, pass, ok := strings.Cut(info, ":"); ok {
			add(pass)
		}
		add(info)
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		q, _, _ := strings.Cut(rest[i+1:], "#")
		for _, kv := range strings.Split(q, "&") {
			name, v, ok := strings.Cut(kv, "=")
			if n, err := url.QueryUnescape(name); err == nil {
				name = n
			}
			if ok && credentialParam(name) {
				add(v)
			}
		}
	}
	return out
}

// credentialParam reports whether a query parameter named name carries a
// credential (URLSecrets): its name says key, token, secret, auth, password
// (pass, pwd), credential or signature, or it is a resumable upload's session
// id.
func credentialParam(name string) bool {
	n := strings.ToLower(name)
	return sensitiveHeader(name) || strings.Contains(n, "sig") || n == "upload_id" ||
		strings.Contains(n, "pass") || strings.Contains(n, "pwd") || strings.Contains(n, "credential")
}

// RedactURL is raw for a message: its user information and its credential
// query values (URLSecrets) replaced by Redacted; raw itself when it has none.
func RedactURL(raw string) string {
	secrets := URLSecrets(raw)
	if len(secrets) == 0 {
		return raw
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return Redact(raw, secrets...)
	}
	hadUser := u.User != nil
	u.User = nil
	if u.RawQuery != "" {
		params := strings.Split(u.RawQuery, "&")
		for i, kv := range params {
			name, _, ok := strings.Cut(kv, "=")
			if n, err := url.QueryUnescape(name); err == nil {
				name = n
			}
			if ok && credentialParam(name) {
				params[i] = kv[:strings.IndexByte(kv, '=')+1] + Redacted
			}
		}
		u.RawQuery = strings.Join(params, "&")
	}
	out := u.String()
	if hadUser { // as ***, which url.User would percent-encode
		out = strings.Replace(out, "//", "//"+Redacted+"@", 1)
	}
	return Redact(out, secrets...)
}

// urlInText is a URL in a message: a scheme, "://" and what follows up to
// white space or a quote.
var urlInText = regexp.MustCompile("[A-Za-z][A-Za-z0-9+.-]*://[^\\s\"'<>`]+")

// RedactURLsIn is msg with the credentials of every URL it names replaced by
// Redacted (RedactURL): an error that names a server by the URL it was given,
// user information or key parameter included.
func RedactURLsIn(msg string) string {
	if !strings.Contains(msg, "://") {
		return msg
	}
	return urlInText.ReplaceAllStringFunc(msg, RedactURL)
}

// RedactText is msg, a text a server or a provider's file wrote (an error
// body, the error of a batch's result line, a batch's status), or a message
// that quotes one, as an output may show it: with the secrets given removed
// (Redact: the process's keys and tokens, in every form a server may echo
// them), the credentials of every URL it names (RedactURLsIn), and every
// credential it holds by its shape alone (keyShapes), whose value the process
// may never have had: the key of the machine that ran a batch whose results
// file is read back, a key a proxy echoes of its own.
func RedactText(msg string, secrets ...string) string {
	return redactKeyShapes(RedactURLsIn(Redact(msg, secrets...)))
}

// keyShapes are the credentials RedactText finds by their shape, as written
// (a text is decoded before it is redacted: a results file's JSON strings):
//
//   - the API keys of OpenAI ("sk-", "sk-proj-", "sk-svcacct-") and Anthropic
//     ("sk-ant-api03-"): "sk-" and at least 20 of [A-Za-z0-9_-] (and "*",
//     which OpenAI's "Incorrect API key provided" writes over a key's middle);
//   - Google's API keys (the Gemini API's): "AIza" and at least 20 of
//     [A-Za-z0-9_-] (35 in a whole one);
//   - GitHub's tokens: "ghp_", "gho_", "ghu_", "ghs_" or "ghr_" and at least
//     30 of [A-Za-z0-9] (36 in a whole one), "github_pat_" and at least 22 of
//     [A-Za-z0-9_]; GitLab's: "glpat-" and at least 20 of [A-Za-z0-9_-];
//
// each starting a word (not after a letter, a digit, "_" or "-": "task-…" is
// no key) and replaced whole by Redacted. Besides them (credentialAfter):
// the credentials of an Authorization header, after "Bearer" or "Basic" (any
// case), and the value of a query parameter that names a credential
// (credentialParam: key, token, secret, auth, password, sig, upload_id) after
// "?" or "&" in a URL without a scheme, which RedactURLsIn does not see.
var keyShapes = regexp.MustCompile(`(?:^|[^A-Za-z0-9_-])(sk-[A-Za-z0-9_*-]{20,}|AIza[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}|glpat-[A-Za-z0-9_-]{20,})`)

// credentialAfter is a word that a credential follows and the credential: the
// scheme of an Authorization header (a word of its own) and its token68 (RFC
// 7235, section 2.1), a credential when credentialToken says so; or a query
// parameter's "?name=" or "&name=" and its value (up to white space, a quote,
// a backslash, "&", "#", ")", "]", "," or ";"), a credential when
// credentialParam says so of its name.
var credentialAfter = regexp.MustCompile(`(?i)(?:^|[^a-z0-9_-])(bearer|basic)[ \t]+([a-z0-9._~+/-]{8,}=*)|[?&]([a-z0-9_.%-]+)=([^&#\s"'<>),;\]\\` + "`" + `]+)`)

// redactKeyShapes is msg with every credential of keyShapes and
// credentialAfter replaced by Redacted.
func redactKeyShapes(msg string) string {
	var cuts [][2]int // the byte ranges of msg to replace
	for _, m := range keyShapes.FindAllStringSubmatchIndex(msg, -1) {
		cuts = append(cuts, [2]int{m[2], m[3]})
	}
	for _, m := range credentialAfter.FindAllStringSubmatchIndex(msg, -1) {
		switch {
		case m[4] >= 0 && credentialToken(msg[m[4]:m[5]]):
			cuts = append(cuts, [2]int{m[4], m[5]})
		case m[6] >= 0 && credentialParam(msg[m[6]:m[7]]):
			// A sentence's full stop after the value is not of it.
			if end := m[8] + len(strings.TrimRight(msg[m[8]:m[9]], ".")); end > m[8] && msg[m[8]:end] != Redacted {
				cuts = append(cuts, [2]int{m[8], end})
			}
		}
	}
	if len(cuts) == 0 {
		return msg
	}
	slices.SortFunc(cuts, func(a, b [2]int) int { return a[0] - b[0] })
	var out strings.Builder
	last := 0 // msg[last:] is not yet written
	for i := 0; i < len(cuts); {
		start, end := cuts[i][0], cuts[i][1]
		// One Redacted for ranges that overlap ("Bearer sk-…": both).
		for i++; i < len(cuts) && cuts[i][0] < end; i++ {
			end = max(end, cuts[i][1])
		}
		out.WriteString(msg[last:start])
		out.WriteString(Redacted)
		last = end
	}
	out.WriteString(msg[last:])
	return out.String()
}

// credentialToken reports whether the word after "Bearer" or "Basic" is a
// credential rather than a word of the sentence ("Bearer authentication
// failed"): it holds a digit, one of "._~+/=-", or an upper-case letter after
// its first character, as a random token of 8 characters or more all but
// always does, and no word of a language.
func credentialToken(w string) bool {
	for i := range len(w) {
		c := w[i]
		if '0' <= c && c <= '9' || strings.IndexByte("._~+/=-", c) >= 0 || i > 0 && 'A' <= c && c <= 'Z' {
			return true
		}
	}
	return false
}

// redactedError is an error whose message has the secrets removed; errors.Is and
// errors.As still see the cause.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactErr returns err with the secrets removed from its message (err itself
// when none occurs in it).
// RedactErr is err with secrets removed from its message (Redact), still
// wrapping err; err itself when its message holds none.
func RedactErr(err error, secrets ...string) error { return redactErr(err, secrets) }

func redactErr(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if r := Redact(msg, secrets...); r != msg {
		return &redactedError{msg: r, err: err}
	}
	return err
}

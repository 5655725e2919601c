package importer

import "unicode/utf8"

// The size of a converted line is known before it is built: a record of
// control characters sextuples as JSON (\u0001), so a 60 MiB CSV record under
// the input cap made a 360 MiB line, built in encoding/json's buffer and
// copied before its size was checked (2.4 GB to refuse it). These functions
// give the exact length encoding/json writes (FuzzLineLen holds them to it),
// without building anything, and stop counting past a limit.

// jsonStringLen is the length of s as encoding/json writes a string, quotes
// included: escapeHTML as json.Marshal (true) or an Encoder with
// SetEscapeHTML(false). The count stops once it passes limit (the result is
// then only known to be over it).
func jsonStringLen(s string, escapeHTML bool, limit int) int {
	n := 2
	for i := 0; i < len(s) && n <= limit; {
		b := s[i]
		if b < utf8.RuneSelf {
			switch {
			case b == '\\' || b == '"' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
				n += 2
			case b < 0x20 || escapeHTML && (b == '<' || b == '>' || b == '&'):
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1, c == '\u2028', c == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// lineLen adds up a JSON line's parts, stopping once the sum passes limit.
type lineLen struct {
	n, limit int
}

func (l *lineLen) add(k int) { l.n += k }

// str adds a string value (escapeHTML: encoding/json's json.Marshal).
func (l *lineLen) str(s string, escapeHTML bool) {
	if l.n <= l.limit {
		l.n += jsonStringLen(s, escapeHTML, l.limit-l.n)
	}
}

// member adds `,"key":` (the comma unless first) and the string value.
func (l *lineLen) member(first bool, key, val string, escapeHTML bool) {
	if !first {
		l.add(1)
	}
	l.add(len(key) + 3)
	l.str(val, escapeHTML)
}

// caseLineLen is the length of the line caseWriter writes for c (without its
// newline), as json.Encoder with SetEscapeHTML(false) encodes caseOut; a
// retrieved entry is its MarshalJSON's, which json.Marshal escapes for HTML.
// Past limit the count stops: the result is then over limit, not exact.
func caseLineLen(c *caseOut, limit int) int {
	l := lineLen{n: 1, limit: limit} // {
	l.member(true, "id", c.ID, false)
	if c.Locale != "" {
		l.member(false, "locale", c.Locale, false)
	}
	if c.Type != "" {
		l.member(false, "type", c.Type, false)
	}
	l.member(false, "query", c.Query, false)
	if len(c.Gold) > 0 {
		l.add(len(`,"must_cite_one_of":[]`))
		for i, g := range c.Gold {
			if i > 0 {
				l.add(1)
			}
			l.str(g, false)
		}
	}
	l.add(len(`,"retrieved":[]`))
	for i, r := range c.Retrieved {
		if i > 0 {
			l.add(1)
		}
		if r.ParentID == "" && r.Text == "" {
			l.str(r.ID, true)
			continue
		}
		l.add(1) // {
		l.member(true, "id", r.ID, true)
		if r.ParentID != "" {
			l.member(false, "parent_id", r.ParentID, true)
		}
		if r.Text != "" {
			l.member(false, "text", r.Text, true)
		}
		l.add(1) // }
	}
	l.add(1) // }
	return l.n
}

// kbLineLen is the length of the KB line of a document (without its newline),
// as json.Encoder with SetEscapeHTML(false) encodes {id, title omitempty,
// text}; past limit the count stops.
func kbLineLen(id, title, text string, limit int) int {
	l := lineLen{n: 1, limit: limit}
	l.member(true, "id", id, false)
	if title != "" {
		l.member(false, "title", title, false)
	}
	l.member(false, "text", text, false)
	l.add(1)
	return l.n
}

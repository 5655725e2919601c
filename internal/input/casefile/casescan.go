package casefile

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// CaseParser decodes cases lines. It is a hand-written scanner for the cases
// schema: it validates the whole line as JSON (RFC 8259, the same language
// encoding/json accepts, including its nesting limit), decodes only the fields a
// Case holds, and skips everything else (unknown fields, a retrieved entry's
// text) without allocating. Strings are unescaped exactly as encoding/json does
// (invalid UTF-8 and lone surrogates become U+FFFD). A key repeated in any
// object of the line is an error naming the key (see jsonpos).
//
// The zero value is ready to use. A CaseParser is not safe for concurrent use;
// reuse one per goroutine to avoid allocations.
type CaseParser struct {
	// StringsInLine makes the decoded strings that need no unquoting (all
	// but top-level unknown keys) view the line's bytes instead of copies:
	// valid only while the line is (see MapOptions.StringsInLine).
	StringsInLine bool
	// NoScores leaves each retrieved entry's Score zero (HasScore still says
	// whether it has one; the number is validated as ever): for a caller
	// that never reads them (check), which then skips their conversion.
	NoScores bool
	// RetrievalK refuses a "retrieval" that is not an object and a
	// "retrieval.k" that is not an integer of at least 1 (retrieval.go): for
	// check, which reads the run's k from it. The other readers skip it.
	RetrievalK bool
	noFast     bool // tests: the general scanner only

	s     jsonpos.Scanner // lexes b
	b     []byte          // the line being parsed
	arena []byte          // unescaped strings of the case
	slab  []byte          // strings handed out are carved from it (see carveStrings)

	id, locale, typ, query arenaSpan
	cluster                arenaSpan
	hasID                  bool
	gold                   []arenaSpan
	relevant               []arenaSpan
	ret                    []retSpan
	hasRetrieved           bool
	scores                 map[string]float64
	hasScores              bool
	scoreErrs              map[string]string // scores key -> type error of its last value
	errs                   [numFields]string // semantic error per top-level field
	topSeen                uint32            // decoded top-level keys met (see once)
	unknown                []arenaSpan       // top-level keys of no field, in line order
	retrievalErr           string            // what is wrong with retrieval.k (RetrievalK)
	values                 int               // array elements and scores decoded (the cap, jsonpos.MaxValues)
}

// fastMaxLine is the longest line parseFast decodes. It has no count of the
// values it decodes: a line of at most 1 MiB holds fewer than jsonpos.MaxValues
// of them, and a longer one goes to the general scanner, which counts them.
const fastMaxLine = 1 << 20

// arenaSpan is a string in the arena, or in the line when inLine
// (StringsInLine); off < 0: absent.
type arenaSpan struct {
	off, end int32
	inLine   bool
}

// span is the arenaSpan of arena[off:end]. The arena holds one line's decoded
// strings, each from its own bytes of the line and at most 3 bytes per byte (an
// invalid UTF-8 byte becomes U+FFFD), and Parse refuses a line longer than MaxLine
// (64 MiB): both offsets are below 3·MaxLine, which fits an int32.
func span(off, end int) arenaSpan {
	return arenaSpan{off: int32(off), end: int32(end)} //nolint:gosec // G115: off, end < 3·MaxLine (see above)
}

var noArenaSpan = arenaSpan{off: -1, end: -1}

func (s arenaSpan) ok() bool { return s.off >= 0 }

type retSpan struct {
	id, parent arenaSpan
	score      float64
	hasScore   bool
}

// Top-level fields, in the order their errors are reported.
const (
	fID = iota
	fLocale
	fType
	fQuery
	fGold
	fRetrieved
	fScores
	fRelevant
	fCluster
	numFields
)

// Parse decodes the JSON line b (without its newline) into c, reusing c's
// slices. Errors are *input.Error naming file and line. Strings in c stay valid after
// the next Parse; c.Raw aliases b.
func (p *CaseParser) Parse(b []byte, file string, line int, c *Case) error {
	if len(b) > MaxLine { // what the line reader refuses; it also keeps the arena's spans in int32
		return input.Errorf(file, line, "line longer than %d MiB", MaxLine>>20)
	}
	if p.StringsInLine && !p.noFast && len(b) <= fastMaxLine && p.parseFast(b, file, line, c) {
		return nil
	}
	p.reset(b)
	if err := p.parseTop(); err != nil {
		return lineError(err, file, line)
	}
	for _, msg := range p.errs {
		if msg != "" {
			return input.Errorf(file, line, "%s", msg)
		}
	}
	if !p.hasID {
		if p.hasUnknown("user_input") {
			return input.Errorf(file, line, "case has no \"id\" (it looks like a ragas record: convert the file with `retrieval-gate import --format ragas`)")
		}
		return input.Errorf(file, line, "case has no \"id\"")
	}
	if p.id.off == p.id.end {
		return input.Errorf(file, line, "case \"id\" is empty")
	}
	if p.hasRetrieved && p.hasScores {
		return input.Errorf(file, line, "case %q has both \"retrieved\" and \"scores\"; give one", p.bytes(p.id))
	}
	if p.retrievalErr != "" { // last: a line refused without RetrievalK is refused for the same reason with it
		return input.Errorf(file, line, "%s", p.retrievalErr)
	}
	p.fill(c, file, line)
	return nil
}

// bytes is the content of a present span.
func (p *CaseParser) bytes(sp arenaSpan) []byte {
	if sp.inLine {
		return p.b[sp.off:sp.end]
	}
	return p.arena[sp.off:sp.end]
}

// hasUnknown reports whether the line has the unknown top-level key.
func (p *CaseParser) hasUnknown(key string) bool {
	for _, u := range p.unknown {
		if string(p.arena[u.off:u.end]) == key {
			return true
		}
	}
	return false
}

// unknownKey records a top-level key the cases format does not know, so that a
// misspelt field is reported instead of silently ignored (keys are unique in a
// line: a repeated key is refused).
func (p *CaseParser) unknownKey(key []byte) {
	off := len(p.arena)
	p.arena = append(p.arena, key...)
	p.unknown = append(p.unknown, span(off, len(p.arena)))
}

// lineError is the *input.Error of a line that failed to parse: "malformed JSON: …"
// for a syntax error, "duplicate key …" for a repeated key, else the error's own
// message.
func lineError(err error, file string, line int) error {
	var se *jsonpos.SyntaxError
	if errors.As(err, &se) {
		return input.Errorf(file, line, "%s", se.Describe())
	}
	return input.Errorf(file, line, "%s", err.Error())
}

func (p *CaseParser) reset(b []byte) {
	p.b = b
	p.s.Reset(b)
	p.topSeen = 0
	p.values = 0
	// The arena is the slab's free tail, so that the strings of a case need no
	// copy (carveStrings); a case whose strings outgrow it has them copied.
	if cap(p.slab)-len(p.slab) < slabMinTail {
		p.slab = make([]byte, 0, slabSize)
	}
	p.arena = p.slab[len(p.slab):len(p.slab)]
	p.id, p.locale, p.typ, p.query = noArenaSpan, noArenaSpan, noArenaSpan, noArenaSpan
	p.cluster = noArenaSpan
	p.hasID = false
	p.gold = p.gold[:0]
	p.relevant = p.relevant[:0]
	p.ret = p.ret[:0]
	p.hasRetrieved = false
	p.scores = nil
	p.hasScores = false
	clear(p.scoreErrs)
	p.errs = [numFields]string{}
	p.unknown = p.unknown[:0]
	p.retrievalErr = ""
}

// slabSize is the size of the blocks the strings of cases are carved from;
// a case starts a new one when less than slabMinTail bytes are left.
const (
	slabSize    = 16 << 10
	slabMinTail = 1 << 10
)

// carveStrings returns the arena's bytes as a string in p.slab: one allocation
// per slabSize bytes of strings instead of one per case, which keeps the
// garbage collector quiet. The arena is the slab's free tail (reset), so
// carving is taking it into the slab; an arena that outgrew the tail (append
// moved it) is copied into a new slab. Safe because a slab is append-only:
// bytes handed out in a string are never written again, and the next arena
// starts past them.
func (p *CaseParser) carveStrings() string {
	n := len(p.arena)
	if n == 0 {
		return ""
	}
	if start := len(p.slab); cap(p.slab) > start && &p.arena[0] == &p.slab[start : start+1][0] {
		p.slab = p.slab[:start+n]
		return unsafe.String(&p.slab[start], n) //nolint:gosec // G103: a view into the slab, whose bytes are never written again (see above)
	}
	if cap(p.slab)-len(p.slab) < n {
		p.slab = make([]byte, 0, max(slabSize, n))
	}
	start := len(p.slab)
	p.slab = append(p.slab, p.arena...)
	return unsafe.String(&p.slab[start], n) //nolint:gosec // G103: a view into the slab, whose bytes are never written again (see above)
}

// fill copies the decoded fields into c.
func (p *CaseParser) fill(c *Case, file string, line int) {
	s := p.carveStrings()
	var inLine string
	if len(p.b) > 0 {
		inLine = unsafe.String(&p.b[0], len(p.b)) //nolint:gosec // G103: the spans in the line, valid while it is (StringsInLine)
	}
	get := func(sp arenaSpan) string {
		switch {
		case !sp.ok():
			return ""
		case sp.inLine:
			return inLine[sp.off:sp.end]
		}
		return s[sp.off:sp.end]
	}
	*c = Case{
		File:         file,
		Line:         line,
		ID:           get(p.id),
		Locale:       get(p.locale),
		Type:         get(p.typ),
		Query:        get(p.query),
		Cluster:      get(p.cluster),
		Gold:         c.Gold[:0],
		Relevant:     c.Relevant[:0],
		Retrieved:    c.Retrieved[:0],
		HasRetrieved: p.hasRetrieved,
		Scores:       p.scores,
		Unknown:      c.Unknown[:0],
		Raw:          p.b,
	}
	if c.Type == "" {
		c.Type = "golden"
	}
	for _, g := range p.gold {
		c.Gold = append(c.Gold, get(g))
	}
	for _, g := range p.relevant {
		c.Relevant = append(c.Relevant, get(g))
	}
	for _, r := range p.ret {
		score := r.score
		if p.NoScores {
			score = 0
		}
		c.Retrieved = append(c.Retrieved, Retrieved{ID: get(r.id), ParentID: get(r.parent), Score: score, HasScore: r.hasScore})
	}
	for _, u := range p.unknown {
		c.Unknown = append(c.Unknown, s[u.off:u.end])
	}
}

// store appends the unescaped content of the string whose quotes are at i and
// end-1 to the arena.
func (p *CaseParser) store(i, end int, esc bool) arenaSpan {
	if p.StringsInLine && !esc {
		return arenaSpan{off: int32(i + 1), end: int32(end - 1), inLine: true} //nolint:gosec // G115: offsets in a line of at most MaxLine bytes
	}
	raw := p.b[i+1 : end-1]
	off := len(p.arena)
	if !esc {
		p.arena = append(p.arena, raw...)
	} else {
		p.arena = jsonpos.AppendUnquoted(p.arena, raw)
	}
	return span(off, len(p.arena))
}

// parseTop parses the whole line. Syntax errors are returned; type errors are
// recorded in p.errs (the last occurrence of a key decides, as with encoding/json)
// and parsing goes on so that a later syntax error still wins.
func (p *CaseParser) parseTop() error { return p.topObject("case", p.caseMember) }

// once records the decoded key of bit in *seen, or reports its repeat (at is
// the offset of its opening quote). Keys the scanner does not decode are
// tracked by the jsonpos.Scanner instead (TrackKey).
func (p *CaseParser) once(seen *uint32, bit uint32, at int, key []byte) error {
	if *seen&bit != 0 {
		return jsonpos.DuplicateKey(at, key)
	}
	*seen |= bit
	return nil
}

// caseMember decodes the member key of a case whose value starts at v.
func (p *CaseParser) caseMember(key []byte, at, v int) (int, error) {
	var bit uint32
	switch string(key) {
	case "id":
		bit = 1
	case "locale":
		bit = 2
	case "type":
		bit = 4
	case "query":
		bit = 8
	case "must_cite_one_of":
		bit = 16
	case "retrieved":
		bit = 32
	case "scores":
		bit = 64
	case "relevant_ids":
		bit = 128
	case "cluster":
		bit = 256
	default:
		if err := p.s.TrackKey(key, at); err != nil || v < 0 {
			return 0, err
		}
		switch string(key) {
		case "retrieval":
			// Written by retrieve (provenance); check reads its k.
			if p.RetrievalK {
				end, msg, err := p.scanRetrieval(v)
				p.retrievalErr = msg
				return end, err
			}
		case "generator", "query_style":
			// Written by generate (provenance), not read by check.
		default:
			p.unknownKey(key)
		}
		return p.s.Skip(v, 1)
	}
	if err := p.once(&p.topSeen, bit, at, key); err != nil || v < 0 {
		return 0, err
	}
	switch bit {
	case 1:
		return p.stringField(v, fID, "id", &p.id)
	case 2:
		return p.stringField(v, fLocale, "locale", &p.locale)
	case 4:
		return p.stringField(v, fType, "type", &p.typ)
	case 8:
		return p.stringField(v, fQuery, "query", &p.query)
	case 16:
		return p.idsField(v, fGold, "must_cite_one_of", &p.gold)
	case 128:
		return p.idsField(v, fRelevant, "relevant_ids", &p.relevant)
	case 32:
		return p.retrievedField(v)
	case 256:
		return p.stringField(v, fCluster, "cluster", &p.cluster)
	}
	return p.scoresField(v)
}

// topObject parses the whole line as one JSON object (what names it in errors:
// "case", "card"), calling member for each of its members in order.
func (p *CaseParser) topObject(what string, member func(key []byte, at, v int) (int, error)) error {
	b := p.b
	i := p.s.WS(0)
	if i >= len(b) {
		return p.s.Unexpected(i, "looking for a "+what+" object")
	}
	if b[i] != '{' {
		end, err := p.s.Skip(i, 0)
		if err != nil {
			return err
		}
		if end = p.s.WS(end); end < len(b) {
			return p.s.Unexpected(end, "after top-level value")
		}
		return fmt.Errorf("a %s must be a JSON object, got %s", what, jsonpos.TypeName(b[i]))
	}
	i, err := p.members(i+1, member)
	if err != nil {
		return err
	}
	if i = p.s.WS(i); i < len(b) {
		return p.s.Unexpected(i, "after the "+what+" object")
	}
	return nil
}

// members parses the members of the object whose '{' ends before i, calling
// member with each key (valid until the next key) and the offset of its value;
// member returns the offset after the value. members returns the offset after
// the closing '}'.
func (p *CaseParser) members(i int, member func(key []byte, at, v int) (int, error)) (int, error) {
	b := p.b
	i = p.s.WS(i)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	p.s.OpenObject()
	for {
		at := i
		key, kend, err := p.s.KeyUntracked(i)
		if err == nil {
			// The key's repeat is reported before what follows it; member
			// called with v < 0 only checks the key.
			v, verr := p.s.Colon(kend)
			if verr == nil && v >= len(b) {
				verr = p.s.Unexpected(v, "looking for a value")
			}
			if verr != nil {
				if _, err = member(key, at, -1); err == nil {
					err = verr
				}
			} else {
				i, err = member(key, at, v)
			}
		}
		var done bool
		if err == nil {
			i, done, err = p.s.Next(i, '}', "after object value")
		}
		if err != nil || done {
			p.s.CloseObject()
			return i, err
		}
	}
}

// container starts the value at v of field f (named name in errors), which must
// be a container opened by open ('[' or '{') or null. For the container it returns
// the offset after open and ok; for null, or a value of another type (recorded as
// f's type error: "must be want"), the offset after the value and not ok.
func (p *CaseParser) container(v, f int, open byte, name, want string) (i int, ok bool, err error) {
	switch p.b[v] {
	case open:
		return v + 1, true, nil
	case 'n':
		i, err = p.s.Literal(v, "null")
		return i, false, err
	}
	i, err = p.s.Skip(v, 1)
	p.errs[f] = fmt.Sprintf("field %q must be %s, got %s", name, want, jsonpos.TypeName(p.b[v]))
	return i, false, err
}

// elements parses the elements of the array whose '[' ends before i, calling
// element with each index n and the offset of its value (not whitespace, maybe
// any byte); element returns the offset after the value. elements returns the
// offset after the closing ']'.
func (p *CaseParser) elements(i int, element func(n, v int) (int, error)) (int, error) {
	b := p.b
	i = p.s.WS(i)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for n := 0; ; n++ {
		if i >= len(b) {
			return 0, p.s.Unexpected(i, "looking for a value")
		}
		if p.values++; p.values > jsonpos.MaxValues {
			return 0, jsonpos.TooManyValues(i, jsonpos.MaxValues)
		}
		var err error
		if i, err = element(n, i); err != nil {
			return 0, err
		}
		var done bool
		if i, done, err = p.s.Next(i, ']', "after array element"); err != nil || done {
			return i, err
		}
	}
}

// stringField decodes a string (or null: absent) into *dst.
func (p *CaseParser) stringField(v, f int, name string, dst *arenaSpan) (int, error) {
	p.errs[f] = ""
	*dst = noArenaSpan
	if f == fID {
		p.hasID = true
	}
	switch p.b[v] {
	case '"':
		end, esc, err := p.s.String(v)
		if err != nil {
			return 0, err
		}
		*dst = p.store(v, end, esc)
		return end, nil
	case 'n':
		if f != fID {
			return p.s.Literal(v, "null")
		}
	}
	end, err := p.s.Skip(v, 1)
	p.errs[f] = fmt.Sprintf("field %q must be a string, got %s", name, jsonpos.TypeName(p.b[v]))
	return end, err
}

// idsField decodes a list of card ids (must_cite_one_of, relevant_ids) of
// field f into *dst: an array of strings, or null.
func (p *CaseParser) idsField(v, f int, name string, dst *[]arenaSpan) (int, error) {
	p.errs[f] = ""
	*dst = (*dst)[:0]
	i, ok, err := p.container(v, f, '[', name, "an array of card ids")
	if !ok {
		return i, err
	}
	b := p.b
	return p.elements(i, func(n, i int) (int, error) {
		if b[i] != '"' {
			end, err := p.s.Skip(i, 2)
			p.fieldErr(f, "%s[%d] must be a string, got %s", name, n, jsonpos.TypeName(b[i]))
			return end, err
		}
		end, esc, err := p.s.String(i)
		if err != nil {
			return 0, err
		}
		// An empty id is kept: it fails the integrity gate, which
		// names it, like any id that is not a card.
		*dst = append(*dst, p.store(i, end, esc))
		return end, nil
	})
}

// fieldErr records the first type error of the current occurrence of field f.
func (p *CaseParser) fieldErr(f int, format string, args ...any) {
	if p.errs[f] == "" {
		p.errs[f] = fmt.Sprintf(format, args...)
	}
}

// retrievedField decodes retrieved: an array of card id strings or objects, or null.
func (p *CaseParser) retrievedField(v int) (int, error) {
	p.errs[fRetrieved] = ""
	p.ret = p.ret[:0]
	p.hasRetrieved = false
	i, ok, err := p.container(v, fRetrieved, '[', "retrieved", "an array")
	if !ok {
		return i, err
	}
	p.hasRetrieved = true
	b := p.b
	return p.elements(i, func(n, i int) (int, error) {
		switch b[i] {
		case '"':
			end, esc, err := p.s.String(i)
			if err != nil {
				return 0, err
			}
			if sp := p.store(i, end, esc); sp.off == sp.end {
				p.fieldErr(fRetrieved, "retrieved[%d] is an empty string", n)
			} else {
				p.ret = append(p.ret, retSpan{id: sp, parent: noArenaSpan})
			}
			return end, nil
		case '{':
			if end, ok := p.retrievedFast(i); ok {
				return end, nil
			}
			return p.retrievedEntry(i, n)
		}
		end, err := p.s.Skip(i, 2)
		p.fieldErr(fRetrieved, "retrieved[%d] must be a card id string or an object, got %s", n, jsonpos.TypeName(b[i]))
		return end, err
	})
}

// retrievedFast decodes the common shape of a retrieved entry starting at i,
// {"id": "…", "parent_id": "…", "score": number} with at most one space between
// tokens and a non-empty id, and reports whether the entry had that shape; if
// not, nothing is recorded and retrievedEntry decodes it (and reports what is
// wrong). Three distinct keys: no duplicate to track.
func (p *CaseParser) retrievedFast(i int) (int, bool) {
	b := p.b
	arena := len(p.arena)
	j, ok := p.fastKey(i+1, `"id"`)
	if !ok || b[j] != '"' {
		return 0, false
	}
	end, esc, err := p.s.String(j)
	if err != nil || end == j+2 {
		return 0, false
	}
	r := retSpan{id: p.store(j, end, esc), parent: noArenaSpan}
	if j, ok = p.fastKey(fastComma(b, end), `"parent_id"`); !ok || b[j] != '"' {
		p.arena = p.arena[:arena]
		return 0, false
	}
	if end, esc, err = p.s.String(j); err != nil {
		p.arena = p.arena[:arena]
		return 0, false
	}
	if end > j+2 {
		r.parent = p.store(j, end, esc)
	}
	if j, ok = p.fastKey(fastComma(b, end), `"score"`); !ok {
		p.arena = p.arena[:arena]
		return 0, false
	}
	if c := b[j]; c != '-' && (c < '0' || c > '9') {
		p.arena = p.arena[:arena]
		return 0, false
	}
	end, f, ok, err := p.s.NumberValue(j)
	if err != nil || !ok {
		p.arena = p.arena[:arena]
		return 0, false
	}
	if end < len(b) && b[end] == ' ' {
		end++
	}
	if end >= len(b) || b[end] != '}' {
		p.arena = p.arena[:arena]
		return 0, false
	}
	r.score, r.hasScore = f, true
	p.ret = append(p.ret, r)
	return end + 1, true
}

// fastKey matches key (quoted) at j, after at most one space, then ':' and at
// most one space, and returns the offset of the value; ok is false for
// anything else (the value offset is then inside the line).
func (p *CaseParser) fastKey(j int, key string) (int, bool) {
	b := p.b
	if j < len(b) && b[j] == ' ' {
		j++
	}
	if j+len(key)+2 > len(b) || string(b[j:j+len(key)]) != key || b[j+len(key)] != ':' {
		return 0, false
	}
	j += len(key) + 1
	if b[j] == ' ' {
		j++
	}
	return j, j < len(b)
}

// fastComma is the offset after the ',' at i (or len(b), which fastKey refuses).
func fastComma(b []byte, i int) int {
	if i < len(b) && b[i] == ',' {
		return i + 1
	}
	return len(b)
}

// retrievedEntry decodes the object entry n of retrieved starting at i: id
// (required string), parent_id (string or null), score (number or null); other
// members, text included, are skipped.
func (p *CaseParser) retrievedEntry(i, n int) (int, error) {
	const depth = 3 // case object, retrieved array, this entry
	b := p.b
	r := retSpan{id: noArenaSpan, parent: noArenaSpan}
	var idErr, parentErr, scoreFieldErr string
	var seen uint32
	i, err := p.members(i+1, func(key []byte, at, v int) (i int, err error) {
		switch string(key) {
		case "id":
			if err := p.once(&seen, 1, at, key); err != nil || v < 0 {
				return 0, err
			}
			r.id, idErr = noArenaSpan, ""
			if b[v] == '"' {
				end, esc, err := p.s.String(v)
				if err != nil {
					return 0, err
				}
				if r.id = p.store(v, end, esc); r.id.off == r.id.end {
					idErr = fmt.Sprintf("retrieved[%d].id is empty", n)
				}
				i = end
			} else {
				if i, err = p.s.Skip(v, depth); err != nil {
					return 0, err
				}
				idErr = fmt.Sprintf("retrieved[%d].id must be a string, got %s", n, jsonpos.TypeName(b[v]))
			}
		case "parent_id":
			if err := p.once(&seen, 2, at, key); err != nil || v < 0 {
				return 0, err
			}
			r.parent, parentErr = noArenaSpan, ""
			switch b[v] {
			case '"':
				end, esc, err := p.s.String(v)
				if err != nil {
					return 0, err
				}
				r.parent = p.store(v, end, esc)
				i = end
			case 'n':
				if i, err = p.s.Literal(v, "null"); err != nil {
					return 0, err
				}
			default:
				if i, err = p.s.Skip(v, depth); err != nil {
					return 0, err
				}
				parentErr = fmt.Sprintf("retrieved[%d].parent_id must be a string, got %s", n, jsonpos.TypeName(b[v]))
			}
		case "score":
			if err := p.once(&seen, 4, at, key); err != nil || v < 0 {
				return 0, err
			}
			r.score, r.hasScore, scoreFieldErr = 0, false, ""
			switch c := b[v]; {
			case c == 'n':
				if i, err = p.s.Literal(v, "null"); err != nil {
					return 0, err
				}
			case c == '-' || '0' <= c && c <= '9':
				var f float64
				var ok bool
				if i, f, ok, err = p.s.NumberValue(v); err != nil {
					return 0, err
				}
				if !ok {
					scoreFieldErr = fmt.Sprintf("retrieved[%d].score %s is out of range", n, b[v:i])
				} else {
					r.score, r.hasScore = f, true
				}
			default:
				if i, err = p.s.Skip(v, depth); err != nil {
					return 0, err
				}
				scoreFieldErr = fmt.Sprintf("retrieved[%d].score must be a number, got %s", n, jsonpos.TypeName(c))
			}
		case "text":
			if err := p.once(&seen, 8, at, key); err != nil || v < 0 {
				return 0, err
			}
			if i, err = p.s.Skip(v, depth); err != nil {
				return 0, err
			}
		default:
			if err := p.s.TrackKey(key, at); err != nil || v < 0 {
				return 0, err
			}
			if i, err = p.s.Skip(v, depth); err != nil {
				return 0, err
			}
		}
		return i, nil
	})
	if err != nil {
		return 0, err
	}
	switch {
	case idErr != "":
		p.fieldErr(fRetrieved, "%s", idErr)
	case !r.id.ok():
		p.fieldErr(fRetrieved, "retrieved[%d] has no \"id\"", n)
	case parentErr != "":
		p.fieldErr(fRetrieved, "%s", parentErr)
	case scoreFieldErr != "":
		p.fieldErr(fRetrieved, "%s", scoreFieldErr)
	default:
		if r.parent.ok() && r.parent.off == r.parent.end {
			r.parent = noArenaSpan // "parent_id": "" means no parent
		}
		p.ret = append(p.ret, r)
	}
	return i, nil
}

// scoresField decodes scores: an object of numbers (null: key absent), or null.
func (p *CaseParser) scoresField(v int) (int, error) {
	p.errs[fScores] = ""
	p.scores = nil
	p.hasScores = false
	clear(p.scoreErrs)
	i, ok, err := p.container(v, fScores, '{', "scores", "an object")
	if !ok {
		return i, err
	}
	p.hasScores = true
	p.scores = make(map[string]float64, 4)
	b := p.b
	i, err = p.members(i, func(key []byte, at, v int) (i int, err error) {
		if err := p.s.TrackKey(key, at); err != nil || v < 0 {
			return 0, err
		}
		if p.values++; p.values > jsonpos.MaxValues {
			return 0, jsonpos.TooManyValues(v, jsonpos.MaxValues)
		}
		k := string(key)
		delete(p.scoreErrs, k)
		switch c := b[v]; {
		case c == 'n':
			if i, err = p.s.Literal(v, "null"); err != nil {
				return 0, err
			}
			delete(p.scores, k)
		case c == '-' || '0' <= c && c <= '9':
			var f float64
			var ok bool
			if i, f, ok, err = p.s.NumberValue(v); err != nil {
				return 0, err
			}
			if ok {
				p.scores[k] = f
			} else {
				delete(p.scores, k)
				p.scoreErr(k, fmt.Sprintf("scores.%s %s is out of range", k, b[v:i]))
			}
		default:
			if i, err = p.s.Skip(v, 2); err != nil {
				return 0, err
			}
			delete(p.scores, k)
			p.scoreErr(k, fmt.Sprintf("scores.%s must be a number, got %s", k, jsonpos.TypeName(c)))
		}
		return i, nil
	})
	if err != nil {
		return 0, err
	}
	if len(p.scoreErrs) > 0 {
		// Report the error of the smallest key: independent of member order.
		first, found := "", false
		for k := range p.scoreErrs {
			if !found || k < first {
				first, found = k, true
			}
		}
		p.errs[fScores] = p.scoreErrs[first]
	}
	return i, nil
}

func (p *CaseParser) scoreErr(k, msg string) {
	if p.scoreErrs == nil {
		p.scoreErrs = make(map[string]string)
	}
	p.scoreErrs[k] = msg
}

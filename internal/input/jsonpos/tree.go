package jsonpos

import (
	"unsafe"
)

// Kind is the JSON type of a Value.
type Kind uint8

// The kinds of values.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// Value is a parsed JSON value with its place in the input.
type Value struct {
	Kind Kind
	// Off and End delimit the value's bytes in the input; Line is the line of
	// Off, counted from the first line given to Parse.
	Off, End int
	Line     int
	Bool     bool
	// Str is the unescaped string of a String value.
	Str string
	// Members of an Object, in input order (keys are unique); Elems of an Array.
	Members []Member
	Elems   []*Value
}

// Member is one key of an object and its value.
type Member struct {
	Key  string
	Off  int // offset of the key's opening quote
	Line int
	*Value
}

// Get returns the value of key, or nil.
func (v *Value) Get(key string) *Value {
	for i := range v.Members {
		if v.Members[i].Key == key {
			return v.Members[i].Value
		}
	}
	return nil
}

// TypeName names the value's JSON type as TypeName does (true and false apart).
func (v *Value) TypeName() string {
	switch v.Kind {
	case Null:
		return "null"
	case Bool:
		if v.Bool {
			return "true"
		}
		return "false"
	case Number:
		return "number"
	case String:
		return "string"
	case Array:
		return "array"
	}
	return "object"
}

// Raw is the value's bytes in data (the input given to Parse).
func (v *Value) Raw(data []byte) []byte { return data[v.Off:v.End] }

// Float64 converts a Number; ok is false when it does not fit a float64.
func (v *Value) Float64(data []byte) (float64, bool) { return ParseNumber(data[v.Off:v.End]) }

// Parser builds trees. It reuses its memory: the Values of one Parse are valid
// until the next Parse, but their strings (Str, Key) stay valid for good. The
// zero value is ready; a Parser is not safe for concurrent use.
type Parser struct {
	// MaxValues caps the values of one tree (0: MaxValues).
	MaxValues int
	left      int // values the tree being parsed may still take

	s      Scanner
	vals   [][]Value // chunks; vals[0] is reused
	nv     int       // values used in the last chunk
	ptrs   [][]*Value
	np     int
	mems   [][]Member
	nm     int
	stackV []*Value
	stackM []Member
	slab   []byte
	tmp    []byte
	line   int
	lineAt int // offset up to which newlines are counted into line
}

const chunkSize = 256

func (p *Parser) newValue() *Value {
	if len(p.vals) == 0 || p.nv == len(p.vals[len(p.vals)-1]) {
		p.vals = append(p.vals, make([]Value, chunkSize))
		p.nv = 0
	}
	v := &p.vals[len(p.vals)-1][p.nv]
	p.nv++
	*v = Value{}
	return v
}

func (p *Parser) ptrSlice(src []*Value) []*Value {
	n := len(src)
	if len(p.ptrs) == 0 || p.np+n > len(p.ptrs[len(p.ptrs)-1]) {
		p.ptrs = append(p.ptrs, make([]*Value, max(chunkSize, n)))
		p.np = 0
	}
	c := p.ptrs[len(p.ptrs)-1]
	out := c[p.np : p.np+n : p.np+n]
	copy(out, src)
	p.np += n
	return out
}

func (p *Parser) memSlice(src []Member) []Member {
	n := len(src)
	if len(p.mems) == 0 || p.nm+n > len(p.mems[len(p.mems)-1]) {
		p.mems = append(p.mems, make([]Member, max(chunkSize, n)))
		p.nm = 0
	}
	c := p.mems[len(p.mems)-1]
	out := c[p.nm : p.nm+n : p.nm+n]
	copy(out, src)
	p.nm += n
	return out
}

// str returns b as a string carved from an append-only slab: one allocation per
// 16 KiB of strings, and a string's bytes are never written again.
func (p *Parser) str(b []byte) string {
	n := len(b)
	if n == 0 {
		return ""
	}
	if cap(p.slab)-len(p.slab) < n {
		p.slab = make([]byte, 0, max(16<<10, n))
	}
	start := len(p.slab)
	p.slab = append(p.slab, b...)
	return unsafe.String(&p.slab[start], n) //nolint:gosec // G103: slab bytes are append-only (a full slab is replaced, never reused), so the view never changes
}

// lineOf returns the line of offset off; offsets must not decrease between calls.
func (p *Parser) lineOf(off int) int {
	b := p.s.B
	for ; p.lineAt < off && p.lineAt < len(b); p.lineAt++ {
		if b[p.lineAt] == '\n' {
			p.line++
		}
	}
	return p.line
}

// Parse parses data as one JSON value (whitespace around it allowed) whose
// first line is line firstLine, within maxDepth nested containers (<= 0:
// MaxDepth) and p.MaxValues values (<= 0: MaxValues). Errors are *SyntaxError.
func (p *Parser) Parse(data []byte, firstLine, maxDepth int) (*Value, error) {
	if maxDepth <= 0 {
		maxDepth = MaxDepth
	}
	p.s.Reset(data)
	if len(p.vals) > 1 {
		p.vals = p.vals[len(p.vals)-1:]
	}
	if len(p.ptrs) > 1 {
		p.ptrs = p.ptrs[len(p.ptrs)-1:]
	}
	if len(p.mems) > 1 {
		p.mems = p.mems[len(p.mems)-1:]
	}
	p.nv, p.np, p.nm = 0, 0, 0
	p.stackV, p.stackM = p.stackV[:0], p.stackM[:0]
	if p.MaxValues <= 0 {
		p.MaxValues = MaxValues
	}
	p.left = p.MaxValues
	p.line, p.lineAt = firstLine, 0
	i := p.s.WS(0)
	if i >= len(data) {
		return nil, p.s.Unexpected(i, "looking for a value")
	}
	v, end, err := p.value(i, 0, maxDepth)
	if err != nil {
		return nil, err
	}
	if end = p.s.WS(end); end < len(data) {
		return nil, p.s.Unexpected(end, "after top-level value")
	}
	return v, nil
}

func (p *Parser) value(i, depth, maxDepth int) (*Value, int, error) {
	s := &p.s
	b := s.B
	if i >= len(b) {
		return nil, 0, s.Unexpected(i, "looking for a value")
	}
	if p.left--; p.left < 0 {
		return nil, 0, capError(i, p.MaxValues)
	}
	v := p.newValue()
	v.Off, v.Line = i, p.lineOf(i)
	var err error
	switch c := b[i]; c {
	case '"':
		end, esc, err := s.String(i)
		if err != nil {
			return nil, 0, err
		}
		v.Kind, v.End = String, end
		if esc {
			p.tmp = AppendUnquoted(p.tmp[:0], b[i+1:end-1])
			v.Str = p.str(p.tmp)
		} else {
			v.Str = p.str(b[i+1 : end-1])
		}
		return v, end, nil
	case '{', '[':
		if depth+1 > maxDepth {
			return nil, 0, s.Errorf(i, "nesting deeper than %d", maxDepth)
		}
		if c == '{' {
			v.Kind = Object
			v.End, err = p.object(v, i, depth, maxDepth)
		} else {
			v.Kind = Array
			v.End, err = p.array(v, i, depth, maxDepth)
		}
		if err != nil {
			return nil, 0, err
		}
		return v, v.End, nil
	case 't', 'f':
		lit := "true"
		if c == 'f' {
			lit = "false"
		}
		v.Kind, v.Bool = Bool, c == 't'
		v.End, err = s.Literal(i, lit)
	case 'n':
		v.Kind = Null
		v.End, err = s.Literal(i, "null")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		v.Kind = Number
		v.End, err = s.Number(i)
	default:
		return nil, 0, s.Unexpected(i, "looking for a value")
	}
	if err != nil {
		return nil, 0, err
	}
	return v, v.End, nil
}

func (p *Parser) object(v *Value, i, depth, maxDepth int) (int, error) {
	s := &p.s
	b := s.B
	i = s.WS(i + 1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	mark := len(p.stackM)
	s.OpenObject()
	defer s.CloseObject()
	for {
		at := i
		line := p.lineOf(i)
		key, vi, err := s.Key(i)
		if err != nil {
			return 0, err
		}
		k := p.str(key)
		c, end, err := p.value(vi, depth+1, maxDepth)
		if err != nil {
			return 0, err
		}
		p.stackM = append(p.stackM, Member{Key: k, Off: at, Line: line, Value: c})
		var done bool
		if i, done, err = s.Next(end, '}', "after object value"); err != nil {
			return 0, err
		}
		if done {
			v.Members = p.memSlice(p.stackM[mark:])
			p.stackM = p.stackM[:mark]
			return i, nil
		}
	}
}

func (p *Parser) array(v *Value, i, depth, maxDepth int) (int, error) {
	s := &p.s
	b := s.B
	i = s.WS(i + 1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	mark := len(p.stackV)
	for {
		c, end, err := p.value(i, depth+1, maxDepth)
		if err != nil {
			return 0, err
		}
		p.stackV = append(p.stackV, c)
		var done bool
		if i, done, err = s.Next(end, ']', "after array element"); err != nil {
			return 0, err
		}
		if done {
			v.Elems = p.ptrSlice(p.stackV[mark:])
			p.stackV = p.stackV[:mark]
			return i, nil
		}
	}
}

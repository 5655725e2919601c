package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/jsoncap"
)

// The inline responses of a finished Gemini batch are read from its operation
// as it arrives: a capped tokenizer (jsoncap.Scanner, read as encoding/json's
// Decoder) walks the operation token by token and reads each inline response
// alone, so what the reading holds is one response, at most GeminiValueCap
// bytes of it (and the keys of the objects open around it), however long the
// operation.
//
// What it accepts and writes is what decoding the whole operation with
// encoding/json into geminiInlineOp did, and its errors come in the same
// order: the text's syntax (anywhere), then a value of the wrong type on the
// path to the responses, then "no inlinedResponses", then the first bad
// inline response, then two keys of one object that differ only in case
// (CheckFoldedKeys) anywhere; but a value over GeminiValueCap is refused as
// too long even where its bytes before the cap hold a syntax error (its
// syntax is checked once it is whole: the Decoder, scanning as it read, named
// the syntax error). Where a key is repeated, encoding/json's last
// value wins, and a pointer already set is decoded into again: the reader
// follows the same rule (geminiSlot), though such an operation is an error
// in the end (the repeated key).

// geminiInlineOp is the operation as encoding/json decoded it for its inline
// responses; its type errors are worded from it (geminiTypeError).
type geminiInlineOp = struct {
	Response *struct {
		InlinedResponses *struct {
			InlinedResponses []json.RawMessage `json:"inlinedResponses"`
		} `json:"inlinedResponses"`
	} `json:"response"`
	Metadata struct {
		Output *struct {
			InlinedResponses *struct {
				InlinedResponses []json.RawMessage `json:"inlinedResponses"`
			} `json:"inlinedResponses"`
		} `json:"output"`
	} `json:"metadata"`
}

// geminiMaxKeys bounds the keys of one object around the inline responses (an
// inline response is bounded by its own bytes): the keys of the open objects
// are what reading the operation keeps. Its error says 65,536.
const geminiMaxKeys = 1 << 16

// The contexts of objectKey's error: Get's reading leaves it to its caller to
// say the answer is malformed ("URL: malformed answer: …"), Download's
// reading says that the batch operation is, as its other errors do.
const (
	opKeyContext     = ""
	inlineKeyContext = "malformed batch operation: "
)

// objectKey reads the next member's key of an object whose '{' was read,
// with token (the reader's own, which begins its value cap anew), keys
// holding the keys read so far: end is true at the object's '}'. The first
// key that repeats another but for letter case is kept in *foldErr (an error
// once the operation is read: CheckFoldedKeys); a key past geminiMaxKeys is
// an error at once, its message after context (opKeyContext,
// inlineKeyContext).
func objectKey(token func() (json.Token, error), keys *httpretry.FoldedKeys, foldErr *error, context string) (key string, end bool, err error) {
	tok, err := token()
	if err != nil {
		return "", false, err
	}
	if tok == json.Delim('}') {
		return "", true, nil
	}
	key, _ = tok.(string) // the decoder reads a key as a string
	if err := keys.Add(key); err != nil && *foldErr == nil {
		*foldErr = err
	}
	if keys.Len() > geminiMaxKeys {
		return "", false, errors.New(context + "an object of more than 65,536 keys around the inline responses (the cap on what reading it may hold)")
	}
	return key, false, nil
}

// maxJSONDepth is encoding/json's bound on nesting.
const maxJSONDepth = 10000

// readError is an error reading the operation (not of its text); writeError
// an error of the writer.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// opSyntaxError is the operation's text not being JSON: msg in
// encoding/json's words.
type opSyntaxError struct{ msg string }

func (e *opSyntaxError) Error() string { return "malformed batch operation: " + e.msg }

// errReader keeps the first error of r other than io.EOF: the decoder's error
// is then the reading's.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// geminiSlot is what decoding the operation holds so far of response (or
// metadata.output): whether its pointer is set, whether its inlinedResponses
// pointer is, and which array its items are (occ: 0 is a nil slice), with
// the first error of an item of that array.
type geminiSlot struct {
	set, ir bool
	occ     int
	itemErr error
}

// geminiTarget is whose lines the output holds: a slot (1 response, 2
// metadata.output) and its array, or none.
type geminiTarget struct{ slot, occ int }

// opStream is an operation read as a stream: the decoder over it, the first
// error of reading it, and the containers open where the decoder is (its
// syntax errors are worded as encoding/json's Unmarshal words them).
//
// The decoder is jsoncap's Scanner, not encoding/json's Decoder: behind a
// reader stopped at the cap, the Decoder grew its buffer by doubling and
// allocated some four times the cap (67 MB for a value 1 MiB over 16 MiB)
// before it failed; the Scanner holds the cap and a piece of the buffer.
type opStream struct {
	src   *errReader
	br    *bufio.Reader // over src: the decoder reads it, end reads the rest
	dec   *jsoncap.Scanner
	depth int
}

// newOpStream reads the operation from src, each token or value (an inline
// response, a field; with the white space and comma before it) at most
// maxValue bytes from the last dec.Mark, a longer one a *valueTooLongError.
func newOpStream(src io.Reader, maxValue int64) opStream {
	er := &errReader{r: src}
	br := bufio.NewReaderSize(er, 32<<10)
	return opStream{src: er, br: br, dec: jsoncap.New(br, maxValue, &valueTooLongError{Cap: maxValue})}
}

type geminiInlineReader struct {
	opStream
	open func() (io.Writer, error)
	bw   *bufio.Writer

	resp, out geminiSlot
	occs      int          // arrays of inline responses seen
	target    geminiTarget // whose lines are being written
	dirty     bool         // lines were written since the writer was opened
	complete  geminiTarget // whose lines the writer holds, every one

	typeErr error // the first value of a wrong type, as encoding/json words it
	foldErr error // the first repeated key
}

// geminiInlined reads a batch operation (or batch) and writes its
// inline responses, response.inlinedResponses.inlinedResponses (else
// metadata.output's), as the responses file writes them: one {"key",
// "response"} or {"key", "error"} line each, the key from the response's
// metadata. An operation with a key twice, or two keys that differ only in
// case, is malformed (CheckFoldedKeys), as each inline response is.
//
// The operation is read as it arrives and each line written as its response
// is read: what the reading holds is one response. The lines go to the
// writer open gives; open is called once, and again (a fresh writer, as for a new
// attempt) when the lines written so far turn out not to be the ones to keep
// (metadata.output's, then a response's). On an error what was written is to
// be discarded. Errors of reading src are *readError, of writing *writeError (Download
// tells them apart).
func geminiInlined(src io.Reader, open func() (io.Writer, error)) error {
	dst, err := open()
	if err != nil {
		return &writeError{err}
	}
	r := &geminiInlineReader{opStream: newOpStream(src, GeminiValueCap), open: open, bw: bufio.NewWriterSize(dst, 64<<10)}
	err = r.document()
	if err := r.readErrorFirst(err); err != nil {
		var re *readError
		var tl *valueTooLongError
		if errors.As(err, &re) && errors.As(re.err, &tl) {
			return tl
		}
		return err
	}
	if r.typeErr != nil {
		return fmt.Errorf("malformed batch operation: %w", r.typeErr)
	}
	t := r.winner()
	if t.slot == 0 {
		return errors.New("the batch operation has no inlinedResponses")
	}
	if s := r.slot(t.slot); s.itemErr != nil {
		return s.itemErr
	}
	if r.foldErr != nil {
		return fmt.Errorf("malformed batch operation: %w", r.foldErr)
	}
	if t != r.target || t.occ != 0 && r.complete != t || t.occ == 0 && r.dirty {
		// The lines written are not the winner's: only an operation with a
		// repeated key (foldErr, returned above) gets here.
		return errors.New("the batch operation's inline responses were overwritten")
	}
	if err := r.bw.Flush(); err != nil {
		return &writeError{err}
	}
	return nil
}

func (r *geminiInlineReader) slot(n int) *geminiSlot {
	if n == 1 {
		return &r.resp
	}
	return &r.out
}

// winner is whose items decoding the operation so far would give.
func (r *geminiInlineReader) winner() geminiTarget {
	switch {
	case r.resp.set && r.resp.ir:
		return geminiTarget{1, r.resp.occ}
	case r.out.set && r.out.ir:
		return geminiTarget{2, r.out.occ}
	}
	return geminiTarget{}
}

// settle starts the output anew when the winner changed: the lines written
// are another array's.
func (r *geminiInlineReader) settle() error {
	t := r.winner()
	if t == r.target {
		return nil
	}
	r.target = t
	if !r.dirty {
		return nil
	}
	dst, err := r.open()
	if err != nil {
		return &writeError{err}
	}
	r.bw.Reset(dst)
	r.dirty, r.complete = false, geminiTarget{}
	return nil
}

// token is the decoder's next token (opStream.token), the value cap's count
// begun anew for it.
func (r *geminiInlineReader) token() (json.Token, error) {
	r.dec.Mark()
	return r.opStream.token()
}

// document reads the operation: one value, then nothing but whitespace.
func (r *geminiInlineReader) document() error {
	tok, err := r.token()
	if err != nil {
		return err
	}
	if err := r.value(tok, geminiRole{kind: roleOp}, 0); err != nil {
		return err
	}
	return r.end()
}

// readErrorFirst is err, unless it is an error of the text (*opSyntaxError)
// and reading the rest of the operation fails: then the reading's error, as
// when the operation was read whole before it was decoded.
func (r *opStream) readErrorFirst(err error) error {
	var se *opSyntaxError
	if errors.As(err, &se) {
		_, _ = io.Copy(io.Discard, r.src)
		if r.src.err != nil {
			return &readError{r.src.err}
		}
	}
	return err
}

// end reads what follows the operation's value, none of it held: nothing
// but whitespace.
func (r *opStream) end() error {
	for {
		b, err := r.br.Peek(max(r.br.Buffered(), 1))
		for _, c := range b {
			if !isJSONSpace(c) {
				return &opSyntaxError{"invalid character " + quoteChar(c) + " after top-level value"}
			}
		}
		_, _ = r.br.Discard(len(b))
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &readError{err}
		}
	}
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// quoteChar is encoding/json's quoting of a byte in its syntax errors.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	s := strconv.Quote(string(c))
	return "'" + s[1:len(s)-1] + "'"
}

// token is the decoder's next token, its errors as jsonErr words them.
func (r *opStream) token() (json.Token, error) {
	tok, err := r.dec.Token()
	if err != nil {
		return nil, r.jsonErr(err)
	}
	return tok, nil
}

// jsonErr is an error of the decoder: the reading's, or the text's in the
// words of encoding/json's Unmarshal (the decoder's stream-only words
// replaced).
func (r *opStream) jsonErr(err error) error {
	if r.src.err != nil {
		return &readError{r.src.err}
	}
	var tl *valueTooLongError
	if errors.As(err, &tl) {
		return &readError{tl} // as when the cap was a reader's
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		// What is left is the start of one value (the decoder checked it;
		// at most the cap): Unmarshal ends a text with a space, which may
		// end the value's token in error ("in literal null"), else
		// "unexpected end".
		frag, _ := io.ReadAll(r.dec.Buffered())
		if err := checkDepth(frag, r.depth); err != nil {
			return err
		}
		msg := "unexpected end of JSON input"
		if err := json.Unmarshal(frag, new(json.RawMessage)); err != nil && strings.HasPrefix(err.Error(), "invalid character ") {
			msg = err.Error()
		}
		return &opSyntaxError{msg}
	}
	var se *jsoncap.SyntaxError
	var jse *json.SyntaxError // of a value's own decoding
	if !errors.As(err, &se) && !errors.As(err, &jse) {
		return fmt.Errorf("malformed batch operation: %w", err)
	}
	msg := err.Error()
	switch {
	case msg == "expected comma after array element", msg == "expected colon after object key":
		// The decoder stopped at the byte (Buffered starts there). (A
		// colon is expected where a value is decoded after its key's
		// token: readGeminiOperation's fields.)
		var c [1]byte
		if n, _ := r.dec.Buffered().Read(c[:]); n == 1 {
			msg = "invalid character " + quoteChar(c[0]) + strings.TrimPrefix(strings.TrimPrefix(msg, "expected comma"), "expected colon")
		}
	case strings.HasPrefix(msg, "invalid character ") && strings.HasSuffix(msg, "'"):
		// The decoder names no context right after '{'.
		msg += " looking for beginning of object key string"
	}
	return &opSyntaxError{msg}
}

// Roles of a value in the operation: what encoding/json decoded it into.
const (
	roleSkip  = iota // a field the operation's struct does not have
	roleOp           // the operation (a struct)
	roleMeta         // metadata (a struct)
	roleOut          // response or metadata.output (a pointer to a struct)
	roleIR           // its inlinedResponses (a pointer to a struct)
	roleItems        // its inlinedResponses (a slice)
)

type geminiRole struct {
	kind int
	slot int      // roleOut, roleIR, roleItems: 1 response, 2 metadata.output
	path []string // the fields down to it
}

// field is the role of the value of key in an object of role g.
func (g geminiRole) field(key string) geminiRole {
	child := func(kind int, name string, slot int) geminiRole {
		if !strings.EqualFold(key, name) { // encoding/json's matching of a field
			return geminiRole{}
		}
		return geminiRole{kind: kind, slot: slot, path: append(append([]string(nil), g.path...), name)}
	}
	switch g.kind {
	case roleOp:
		if r := child(roleOut, "response", 1); r.kind != roleSkip {
			return r
		}
		return child(roleMeta, "metadata", 0)
	case roleMeta:
		return child(roleOut, "output", 2)
	case roleOut:
		return child(roleIR, "inlinedResponses", g.slot)
	case roleIR:
		return child(roleItems, "inlinedResponses", g.slot)
	}
	return geminiRole{}
}

// value reads the value that starts with tok, at depth open containers, in
// role g.
func (r *geminiInlineReader) value(tok json.Token, g geminiRole, depth int) error {
	d, isDelim := tok.(json.Delim)
	if isDelim {
		if depth+1 > maxJSONDepth {
			c := byte('{')
			if d == '[' {
				c = '['
			}
			return &opSyntaxError{"invalid character " + quoteChar(c) + " exceeded max depth"}
		}
	}
	var s *geminiSlot
	if g.slot != 0 {
		s = r.slot(g.slot)
	}
	want := json.Delim('{')
	if g.kind == roleItems {
		want = '['
	}
	switch {
	case g.kind == roleSkip:
	case tok == nil: // null: a pointer or a slice is set to nil; a struct is left
		switch g.kind {
		case roleOut:
			*s = geminiSlot{}
		case roleIR:
			s.ir, s.occ, s.itemErr = false, 0, nil
		case roleItems:
			s.occ, s.itemErr = 0, nil
		}
		return r.settle()
	case !isDelim || d != want:
		if r.typeErr == nil {
			r.typeErr = geminiTypeError(g.path, tok)
		}
		g = geminiRole{}
	case g.kind == roleOut && !s.set:
		*s = geminiSlot{set: true}
	case g.kind == roleIR && !s.ir:
		s.ir, s.occ, s.itemErr = true, 0, nil
	case g.kind == roleItems:
		r.depth = depth + 1
		defer func() { r.depth = depth }()
		return r.items(s, g.slot, depth+1)
	}
	if err := r.settle(); err != nil {
		return err
	}
	if !isDelim {
		return nil
	}
	r.depth = depth + 1
	defer func() { r.depth = depth }()
	if d == '[' {
		return r.array(depth + 1)
	}
	return r.object(g, depth+1)
}

// object reads the members of an object of role g (its '{' read).
func (r *geminiInlineReader) object(g geminiRole, depth int) error {
	var keys httpretry.FoldedKeys
	for {
		key, end, err := objectKey(r.token, &keys, &r.foldErr, inlineKeyContext)
		if err != nil || end {
			return err
		}
		v, err := r.token()
		if err != nil {
			return err
		}
		if err := r.value(v, g.field(key), depth); err != nil {
			return err
		}
	}
}

// array reads the elements of an array no field reads (its '[' read).
func (r *geminiInlineReader) array(depth int) error {
	for {
		tok, err := r.token()
		if err != nil {
			return err
		}
		if tok == json.Delim(']') {
			return nil
		}
		if err := r.value(tok, geminiRole{}, depth); err != nil {
			return err
		}
	}
}

// items reads an array of inline responses (its '[' read, at depth) into
// slot s (n): a new array for it, whose lines are written while it is the
// winner.
func (r *geminiInlineReader) items(s *geminiSlot, n, depth int) error {
	r.occs++
	s.occ, s.itemErr = r.occs, nil
	if err := r.settle(); err != nil {
		return err
	}
	emit := r.target == geminiTarget{n, s.occ}
	for i := 1; ; i++ {
		r.dec.Mark() // the white space before the next counts against it
		if !r.dec.More() {
			break
		}
		raw, err := r.dec.DecodeRaw()
		if err != nil {
			return r.jsonErr(err)
		}
		if err := checkDepth(raw, depth); err != nil {
			return err
		}
		fold := CheckFoldedKeys(raw)
		if fold != nil && r.foldErr == nil {
			r.foldErr = fold
		}
		if s.itemErr != nil || r.typeErr != nil {
			continue // its lines are not kept: only the text is checked
		}
		line, err := geminiInlineLine(raw, fold)
		if err != nil {
			s.itemErr = fmt.Errorf("inline response %d: %w", i, err)
			continue
		}
		if emit {
			if _, err := r.bw.Write(line); err != nil {
				return &writeError{err}
			}
			r.dirty = true
		}
	}
	tok, err := r.token()
	if err != nil {
		return err
	}
	if tok != json.Delim(']') {
		return &opSyntaxError{"invalid character after array element"} // More stops only at ']' or '}' (a syntax error of Token)
	}
	if emit {
		r.complete = geminiTarget{n, s.occ}
	}
	return nil
}

// checkDepth refuses a value (raw, valid JSON, or the start of one) that
// nests deeper than encoding/json reads inside depth open containers.
func checkDepth(raw []byte, depth int) error {
	if len(raw) <= maxJSONDepth-depth {
		return nil // too short to open that many containers
	}
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inString:
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > maxJSONDepth {
				return &opSyntaxError{"invalid character " + quoteChar(c) + " exceeded max depth"}
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// geminiInlineLine is the responses file's line of an inline response (raw,
// valid JSON; fold its CheckFoldedKeys): {"key", "response"} or {"key",
// "error"}, the keys sorted, with a newline.
func geminiInlineLine(raw []byte, fold error) ([]byte, error) {
	if fold != nil {
		return nil, fold
	}
	var it struct {
		Metadata struct {
			Key string `json:"key"`
		} `json:"metadata"`
		Response json.RawMessage `json:"response"`
		Error    json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(raw, &it); err != nil {
		return nil, err
	}
	line := map[string]any{"key": it.Metadata.Key}
	if len(it.Response) > 0 {
		line["response"] = it.Response
	}
	if len(it.Error) > 0 {
		line["error"] = it.Error
	}
	b, err := json.Marshal(line)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// geminiTypeError is encoding/json's error for the value that starts with tok
// at path, of a type its field cannot hold: the same value's kind decoded at
// the same path of geminiInlineOp.
func geminiTypeError(path []string, tok json.Token) error {
	v := "0"
	switch t := tok.(type) {
	case json.Delim:
		v = map[json.Delim]string{'{': "{}", '[': "[]"}[t]
	case string:
		v = `""`
	case bool:
		v = "true"
	}
	var b bytes.Buffer
	for _, p := range path {
		b.WriteString(`{"` + p + `":`)
	}
	b.WriteString(v + strings.Repeat("}", len(path)))
	var op geminiInlineOp
	if err := json.Unmarshal(b.Bytes(), &op); err != nil {
		return err
	}
	return fmt.Errorf("a value of the wrong type at %s", strings.Join(path, ".")) // not reached: the caller saw the wrong type
}

package dataset

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Card is one knowledge-base card.
type Card struct {
	ID     string
	Locale string
	Title  string
	Text   string
	File   string // where the card was read from
	// Line in File: the card's line for JSONL; for Markdown cards the line of the
	// front matter's `id` key, else 1.
	Line int
}

// KB is a loaded knowledge base, cards in a deterministic order (JSONL: file order;
// Markdown: path order).
type KB struct {
	Path  string
	Cards []Card
	byID  map[string]int
}

// Has reports whether id is a card of the KB.
func (kb *KB) Has(id string) bool { _, ok := kb.byID[id]; return ok }

// Card returns the card with id.
func (kb *KB) Card(id string) (Card, bool) {
	i, ok := kb.byID[id]
	if !ok {
		return Card{}, false
	}
	return kb.Cards[i], true
}

// Len is the number of cards.
func (kb *KB) Len() int { return len(kb.Cards) }

// maxKBLine bounds one line of a JSONL knowledge base.
const maxKBLine = 64 << 20

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// LoadKB reads a knowledge base from path: either a JSONL file of cards
// {"id", "locale", "title", "text"} (one per line; blank lines skipped; unknown
// fields ignored) or a directory of Markdown cards (*.md, searched recursively,
// read in sorted path order; hidden files and directories, whose name starts
// with a dot, are skipped) whose YAML front matter holds id (default: the file
// name without .md), locale and title, the body after it being the text. A single
// *.md file is read as a KB of one Markdown card. A UTF-8 BOM and CRLF line ends
// are accepted; Markdown text is returned with LF line ends.
//
// Input errors (malformed lines, wrong types, duplicate ids, a KB without cards)
// are *Error naming file and line.
func LoadKB(path string) (*KB, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read knowledge base: %w", err)
	}
	kb := &KB{Path: path}
	switch {
	case st.IsDir():
		err = kb.loadMarkdownDir(path)
	case strings.EqualFold(filepath.Ext(path), ".md"):
		err = kb.loadMarkdownFile(path)
	default:
		err = kb.loadJSONL(path)
	}
	if err != nil {
		return nil, err
	}
	if len(kb.Cards) == 0 {
		if st.IsDir() {
			return nil, Errorf(path, 0, "knowledge base has no cards (no *.md files found)")
		}
		return nil, Errorf(path, 0, "knowledge base has no cards")
	}
	return kb, nil
}

// add appends c, rejecting a duplicate id.
func (kb *KB) add(c Card) error {
	if kb.byID == nil {
		kb.byID = make(map[string]int)
	}
	if i, ok := kb.byID[c.ID]; ok {
		first := kb.Cards[i]
		return Errorf(c.File, c.Line, "duplicate card id %q (first defined at %s:%d)", c.ID, first.File, first.Line)
	}
	kb.byID[c.ID] = len(kb.Cards)
	kb.Cards = append(kb.Cards, c)
	return nil
}

func (kb *KB) loadJSONL(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("failed to read knowledge base: %w", err)
	}
	defer f.Close()
	return kb.readJSONL(f, path)
}

// readJSONL reads JSONL cards from r, naming file in errors.
func (kb *KB) readJSONL(r io.Reader, file string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxKBLine)
	var p CaseParser
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 {
			b = bytes.TrimPrefix(b, utf8BOM)
		}
		if isBlank(b) {
			continue
		}
		c, err := parseCardJSON(&p, b, file, line)
		if err != nil {
			return err
		}
		if err := kb.add(c); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Errorf(file, line+1, "line longer than %d MiB", maxKBLine>>20)
		}
		return fmt.Errorf("failed to read %s: %w", file, err)
	}
	return nil
}

// parseCardJSON decodes one JSONL card line with the cases scanner (strict
// JSON, strings unescaped as encoding/json does; the last of duplicate keys wins).
func parseCardJSON(p *CaseParser, b []byte, file string, line int) (Card, error) {
	c := Card{File: file, Line: line}
	p.reset(b)
	var fields [4]string // id, locale, title, text
	var errs [4]string
	hasID := false
	err := p.topObject("card", func(key []byte, v int) (i int, err error) {
		f := -1
		switch string(key) {
		case "id":
			f, hasID = 0, true
		case "locale":
			f = 1
		case "title":
			f = 2
		case "text":
			f = 3
		}
		switch {
		case f < 0:
			i, err = p.skipValue(v, 1)
		case b[v] == '"':
			var esc bool
			if i, esc, err = p.scanString(v); err == nil {
				p.arena = p.arena[:0]
				sp := p.store(v, i, esc)
				fields[f], errs[f] = string(p.arena[sp.off:sp.end]), ""
			}
		case b[v] == 'n' && f > 0:
			fields[f], errs[f] = "", ""
			i, err = p.literal(v, "null")
		default:
			fields[f] = ""
			errs[f] = fmt.Sprintf("card field %q must be a string, got %s", key, jsonTypeName(b[v]))
			i, err = p.skipValue(v, 1)
		}
		return i, err
	})
	p.b = nil
	if err != nil {
		return c, lineError(err, file, line)
	}
	for _, msg := range errs {
		if msg != "" {
			return c, Errorf(file, line, "%s", msg)
		}
	}
	if !hasID {
		return c, Errorf(file, line, "card has no \"id\"")
	}
	if fields[0] == "" {
		return c, Errorf(file, line, "card \"id\" is empty")
	}
	c.ID, c.Locale, c.Title, c.Text = fields[0], fields[1], fields[2], fields[3]
	return c, nil
}

func (kb *KB) loadMarkdownDir(root string) error {
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		hidden := p != root && strings.HasPrefix(d.Name(), ".")
		if d.IsDir() {
			if hidden {
				return filepath.SkipDir // .git, .github, editor state: not cards
			}
			return nil
		}
		if !hidden && strings.EqualFold(filepath.Ext(p), ".md") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("failed to read knowledge base: %w", err)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := kb.loadMarkdownFile(p); err != nil {
			return err
		}
	}
	return nil
}

func (kb *KB) loadMarkdownFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("failed to read knowledge base: %w", err)
	}
	c, err := ParseMarkdownCard(path, b)
	if err != nil {
		return err
	}
	return kb.add(c)
}

// ParseMarkdownCard parses the Markdown card b read from file. Front matter is a
// YAML mapping between a first line `---` and the next line `---` (or `...`);
// its `id` (default: the file name without .md), `locale` and `title` must be
// scalars, other keys are ignored. The text is what follows the front matter, or
// the whole file when there is none. Line ends (CRLF, CR) are turned into LF
// first, so line numbers count them as CommonMark does.
func ParseMarkdownCard(file string, b []byte) (Card, error) {
	b = normalizeNewlines(bytes.TrimPrefix(b, utf8BOM))
	c := Card{File: file, Line: 1, ID: strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))}
	fm, body, ok, err := splitFrontMatter(file, b)
	if err != nil {
		return c, err
	}
	if !ok {
		c.Text = string(b)
		if c.ID == "" {
			return c, Errorf(file, 0, "card has an empty id (file name)")
		}
		return c, nil
	}
	c.Text = string(body)
	if err := parseFrontMatter(file, fm, &c); err != nil {
		return c, err
	}
	if c.ID == "" {
		return c, Errorf(file, c.Line, "card has an empty id")
	}
	return c, nil
}

// splitFrontMatter returns the YAML between the opening and closing delimiter
// lines and the body after the closing one. ok is false when b does not start
// with a `---` line.
func splitFrontMatter(file string, b []byte) (fm, body []byte, ok bool, err error) {
	first, rest, found := bytes.Cut(b, []byte("\n"))
	if !isDelim(first, "---") {
		return nil, nil, false, nil
	}
	if !found {
		// "---" alone: an opened front matter that never closes.
		return nil, nil, false, Errorf(file, 1, "front matter opened by --- is not closed")
	}
	off := 0
	for off <= len(rest) {
		ln, tail, more := bytes.Cut(rest[off:], []byte("\n"))
		if isDelim(ln, "---") || isDelim(ln, "...") {
			if more {
				body = rest[off+len(ln)+1:]
			}
			return rest[:off], body, true, nil
		}
		if !more {
			break
		}
		off = len(rest) - len(tail)
	}
	return nil, nil, false, Errorf(file, 1, "front matter opened by --- is not closed")
}

func isDelim(ln []byte, d string) bool {
	ln = bytes.TrimRight(ln, " \t\r")
	return string(ln) == d
}

// normalizeNewlines turns every line ending (CRLF, or a CR alone, as CommonMark
// defines them) into LF.
func normalizeNewlines(b []byte) []byte {
	if bytes.IndexByte(b, '\r') < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '\r' {
			out = append(out, '\n')
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
			continue
		}
		out = append(out, b[i])
	}
	return out
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): `)

// parseFrontMatter fills c from the YAML front matter fm, which starts on line 2
// of the file.
func parseFrontMatter(file string, fm []byte, c *Card) error {
	const firstLine = 2
	var doc yaml.Node
	if err := unmarshalYAML(fm, &doc); err != nil {
		msg := err.Error()
		line := firstLine
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			line = firstLine + n - 1
			msg = msg[len(m[0]):]
		} else {
			msg = strings.TrimPrefix(msg, "yaml: ")
		}
		return Errorf(file, line, "invalid YAML front matter: %s", msg)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil // empty front matter
	}
	m := doc.Content[0]
	if m.Kind == yaml.ScalarNode && m.Tag == "!!null" {
		return nil
	}
	if m.Kind != yaml.MappingNode {
		return Errorf(file, firstLine+m.Line-1, "front matter must be a YAML mapping of keys to values")
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		var dst *string
		switch k.Value {
		case "id":
			dst = &c.ID
		case "locale":
			dst = &c.Locale
		case "title":
			dst = &c.Title
		default:
			continue
		}
		line := firstLine + k.Line - 1
		if v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		if v.Kind != yaml.ScalarNode {
			return Errorf(file, line, "front matter %q must be a string", k.Value)
		}
		if v.Tag == "!!null" {
			continue // keep the default
		}
		*dst = v.Value
		if k.Value == "id" {
			c.Line = line
		}
	}
	return nil
}

// unmarshalYAML is yaml.Unmarshal that turns a panic of the YAML library on
// hostile input into an error.
func unmarshalYAML(b []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: %v", r)
		}
	}()
	return yaml.Unmarshal(b, v)
}

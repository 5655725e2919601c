package kbfile

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// ParseMarkdownCard parses the Markdown card b read from file. Front matter is a
// YAML mapping between a first line `---` and the next line `---` (or `...`);
// its `id` (default: the file name without .md), `locale` and `title` must be
// scalars, other keys are ignored. The text is what follows the front matter, or
// the whole file when there is none. Line ends (CRLF, CR) are turned into LF
// first, so line numbers count them as CommonMark does.
func ParseMarkdownCard(file string, b []byte) (Card, error) {
	b = normalizeNewlines(bytes.TrimPrefix(b, input.BOM))
	c := Card{File: file, Line: 1, ID: strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))}
	fm, body, ok, err := splitFrontMatter(file, b)
	if err != nil {
		return c, err
	}
	if !ok {
		c.Text = string(b)
		if c.ID == "" {
			return c, input.Errorf(file, 0, "card has an empty id (file name)")
		}
		return c, nil
	}
	c.Text = string(body)
	if len(fm) > MaxFrontMatter {
		return c, input.Errorf(file, 1, "front matter longer than %d KiB (the cap on what a card may take in memory: a YAML tree takes about a hundred bytes per byte of input)", MaxFrontMatter>>10)
	}
	if err := parseFrontMatter(file, fm, &c); err != nil {
		return c, err
	}
	if c.ID == "" {
		return c, input.Errorf(file, c.Line, "card has an empty id")
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
		return nil, nil, false, input.Errorf(file, 1, "front matter opened by --- is not closed")
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
	return nil, nil, false, input.Errorf(file, 1, "front matter opened by --- is not closed")
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

// MaxFrontMatter caps a card's YAML front matter: a few scalar keys (the
// others are refused or ignored), and the YAML library's tree of it takes about
// a hundred bytes per byte of input (8 MiB of "[0,0,…]" took 870 MB), which
// the card's own cap (MaxCardBytes) does not bound.
const MaxFrontMatter = 256 << 10

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
		return input.Errorf(file, line, "invalid YAML front matter: %s", msg)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil // empty front matter
	}
	m := doc.Content[0]
	if m.Kind == yaml.ScalarNode && m.Tag == "!!null" {
		return nil
	}
	if m.Kind != yaml.MappingNode {
		return input.Errorf(file, firstLine+m.Line-1, "front matter must be a YAML mapping of keys to values")
	}
	first := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind == yaml.ScalarNode {
			// One rule for repeated keys in every reader: refused.
			if at, dup := first[k.Value]; dup {
				return input.Errorf(file, firstLine+k.Line-1, "duplicate key %s in the front matter (first on line %d)", jsonpos.QuoteKey([]byte(k.Value)), at)
			}
			first[k.Value] = firstLine + k.Line - 1
		}
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
			return input.Errorf(file, line, "front matter %q must be a string", k.Value)
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

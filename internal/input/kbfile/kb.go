// Package kbfile reads knowledge bases: a JSONL file of cards or a directory of
// Markdown cards with YAML front matter.
//
// A knowledge-base directory is read defensively: only regular files are cards
// (a named pipe, a device or a socket named *.md is skipped with a warning, and
// never opened for a blocking read), a symbolic link in it is followed only when
// its target is a regular file inside the directory, and a card is at most
// MaxCardBytes. The directory itself may be named through a symbolic link: its
// target is the directory whose cards are read (and "inside" means inside it).
package kbfile

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// MaxCardBytes caps one card: a Markdown card file, or one line of a JSONL
// knowledge base.
const MaxCardBytes = 16 << 20

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
	// Skipped names the *.md entries of a directory that were not read, each with
	// the reason ("kb/a.md: not a regular file (named pipe)"), in path order: the
	// commands print them as warnings.
	Skipped []string
	byID    map[string]int
	index   *idIndex // the ids again, for Has (built by Load)
}

// WarnSkipped gives logf (nil: nothing) one warning per entry of Skipped,
// "warning: knowledge base: skipped ENTRY", the words every command that
// reads a knowledge base prints them in.
func (kb *KB) WarnSkipped(logf func(format string, args ...any)) {
	if kb == nil || logf == nil {
		return
	}
	for _, s := range kb.Skipped {
		logf("warning: knowledge base: skipped %s", s)
	}
}

// Has reports whether id is a card of the KB.
func (kb *KB) Has(id string) bool {
	if kb.index != nil && len(id) <= maxIndexedID {
		return kb.index.has(id)
	}
	_, ok := kb.byID[id]
	return ok
}

// Keys sets keys[i] to the key of ids[i] (keys is at least as long as ids): 0
// when it is not a card of the KB, else a number no other card's id has, so
// that two ids of cards are equal exactly when their keys are. The lookups
// of a case at once: the same answers as Has, faster than one by one, and
// the keys tell the case's ids apart without comparing their bytes.
func (kb *KB) Keys(ids []string, keys []uint64) {
	keys = keys[:len(ids)]
	x := kb.index
	if x == nil {
		for i, id := range ids {
			keys[i] = 0
			if c, ok := kb.byID[id]; ok {
				keys[i] = uint64(c) + 1 //nolint:gosec // G115: a card's index, not negative
			}
		}
		return
	}
	// Ids past the index's bound are keyed by their card's index, above the
	// index's slots.
	base := uint64(len(x.short) + len(x.slots))
	for start := 0; start < len(ids); {
		end := start
		for end < len(ids) && len(ids[end]) <= maxIndexedID {
			end++
		}
		x.keys(ids[start:end], keys[start:end])
		if end < len(ids) {
			keys[end] = 0
			if c, ok := kb.byID[ids[end]]; ok {
				keys[end] = base + uint64(c) + 1 //nolint:gosec // G115: a card's index, not negative
			}
			end++
		}
		start = end
	}
}

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

// Load reads a knowledge base from path: either a JSONL file of cards
// {"id", "locale", "title", "text"} (one per line; blank lines skipped; unknown
// fields ignored) or a directory of Markdown cards (*.md, searched recursively,
// read in sorted path order; hidden files and directories, whose name starts
// with a dot, are skipped) whose YAML front matter holds id (default: the file
// name without .md), locale and title, the body after it being the text. A single
// *.md file is read as a KB of one Markdown card. A UTF-8 BOM and CRLF line ends
// are accepted; Markdown text is returned with LF line ends.
//
// Input errors (malformed lines, wrong types, duplicate ids or keys, a card over
// MaxCardBytes, a KB without cards) are *input.Error naming file and line. Loading
// stops soon after ctx ends, also while waiting on a pipe.
func Load(ctx context.Context, path string) (*KB, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read knowledge base: %w", err)
	}
	kb := &KB{Path: path}
	switch {
	case st.IsDir():
		err = kb.loadMarkdownDir(ctx, path)
	case strings.EqualFold(filepath.Ext(path), ".md"):
		err = kb.loadMarkdownFile(ctx, path, path)
	default:
		err = kb.loadJSONL(ctx, path)
	}
	if err != nil {
		return nil, err
	}
	if len(kb.Cards) == 0 {
		if st.IsDir() {
			return nil, input.Errorf(path, 0, "knowledge base has no cards (no *.md files found)")
		}
		return nil, input.Errorf(path, 0, "knowledge base has no cards")
	}
	kb.buildIndex()
	return kb, nil
}

// add appends c, rejecting a duplicate id.
func (kb *KB) add(c Card) error {
	if kb.byID == nil {
		kb.byID = make(map[string]int)
	}
	if i, ok := kb.byID[c.ID]; ok {
		first := kb.Cards[i]
		return input.Errorf(c.File, c.Line, "duplicate card id %q (first defined at %s:%d)", c.ID, first.File, first.Line)
	}
	kb.byID[c.ID] = len(kb.Cards)
	kb.Cards = append(kb.Cards, c)
	return nil
}

func (kb *KB) loadJSONL(ctx context.Context, path string) error {
	f, err := input.Open(ctx, path)
	if err != nil {
		return fmt.Errorf("failed to read knowledge base: %w", err)
	}
	defer f.Close()
	return kb.readJSONL(ctx, input.Reader(ctx, f), path)
}

// readJSONL reads JSONL cards from r, naming file in errors.
func (kb *KB) readJSONL(ctx context.Context, r io.Reader, file string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxCardBytes)
	var p jsonpos.Parser
	line := 0
	for sc.Scan() {
		line++
		if line&0x3ff == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		b := sc.Bytes()
		if line == 1 {
			b = input.TrimBOM(b)
		}
		if input.IsBlank(b) {
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
			return input.Errorf(file, line+1, "line longer than %d MiB (the cap of one card)", MaxCardBytes>>20)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("failed to read %s: %w", file, err)
	}
	return nil
}

// parseCardJSON decodes one JSONL card line (strict JSON, strings unescaped as
// encoding/json does, a repeated key refused).
func parseCardJSON(p *jsonpos.Parser, b []byte, file string, line int) (Card, error) {
	c := Card{File: file, Line: line}
	v, err := p.Parse(b, line, 0)
	if err != nil {
		var se *jsonpos.SyntaxError
		if errors.As(err, &se) {
			return c, input.Errorf(file, line, "%s", se.Describe())
		}
		return c, input.Errorf(file, line, "%s", err)
	}
	if v.Kind != jsonpos.Object {
		return c, input.Errorf(file, line, "a card must be a JSON object, got %s", v.TypeName())
	}
	hasID, query, textual := false, false, false
	for _, m := range v.Members {
		var dst *string // the card field the member sets; nil: not a card field
		switch m.Key {
		case "query":
			query = true
		case "text", "title":
			textual = true
		}
		switch m.Key {
		case "id":
			dst, hasID = &c.ID, true
		case "locale":
			dst = &c.Locale
		case "title":
			dst = &c.Title
		case "text":
			dst = &c.Text
		}
		switch {
		case dst == nil:
		case m.Kind == jsonpos.String:
			*dst = m.Str
		case m.Kind == jsonpos.Null && dst != &c.ID:
		default:
			return c, input.Errorf(file, line, "card field %q must be a string, got %s", m.Key, m.TypeName())
		}
	}
	if query && !textual {
		// A cases file given as the KB: its ids would all be read as cards.
		return c, input.Errorf(file, line, "looks like a cases file (a \"query\" and no \"text\" or \"title\"), not a knowledge base: a KB is cards {\"id\", \"locale\", \"title\", \"text\"}, one per line, or a directory of Markdown cards")
	}
	if !hasID {
		return c, input.Errorf(file, line, "card has no \"id\"")
	}
	if c.ID == "" {
		return c, input.Errorf(file, line, "card \"id\" is empty")
	}
	return c, nil
}

// mdFile is a Markdown card to read: its path in the KB (named in errors) and
// the path to open (the resolved target of a symbolic link).
type mdFile struct{ name, open string }

func (kb *KB) loadMarkdownDir(ctx context.Context, root string) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("failed to read knowledge base: %w", err)
	}
	// root may be a symbolic link to the directory (kb -> ../shared/kb): the walk
	// is of its target, which WalkDir does not follow, and each card is named
	// under root, as given.
	name := func(p string) string { return p }
	if walk := filepath.Clean(root); realRoot != walk {
		name = func(p string) string {
			rel, _ := filepath.Rel(realRoot, p)
			return filepath.Join(root, rel)
		}
	}
	var files []mdFile
	err = filepath.WalkDir(realRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		hidden := p != realRoot && strings.HasPrefix(d.Name(), ".")
		if d.IsDir() {
			if hidden {
				return filepath.SkipDir // .git, .github, editor state: not cards
			}
			return nil
		}
		if hidden || !strings.EqualFold(filepath.Ext(p), ".md") {
			return nil
		}
		switch t := d.Type(); {
		case t.IsRegular():
			files = append(files, mdFile{name(p), p})
		case t&fs.ModeSymlink != 0:
			target, why := resolveInside(realRoot, p)
			if why != "" {
				kb.skip(name(p), why)
				return nil
			}
			files = append(files, mdFile{name(p), target})
		default:
			kb.skip(name(p), "not a regular file ("+describeMode(t)+")")
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("failed to read knowledge base: %w", err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := kb.loadMarkdownFile(ctx, f.name, f.open); err != nil {
			return err
		}
	}
	return nil
}

func (kb *KB) skip(p, why string) {
	kb.Skipped = append(kb.Skipped, fmt.Sprintf("%s: %s", quotePath(p), why))
}

// quotePath quotes a path for a message when it holds anything but printable
// characters (a newline in a file name must not start a line of its own).
func quotePath(p string) string {
	for _, r := range p {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return fmt.Sprintf("%q", p)
		}
	}
	return p
}

// resolveInside resolves the symbolic link p; the target must be a regular file
// inside realRoot (the resolved KB directory). why says otherwise.
func resolveInside(realRoot, p string) (target, why string) {
	t, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", "a symbolic link that cannot be resolved"
	}
	rel, err := filepath.Rel(realRoot, t)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", "a symbolic link out of the knowledge-base directory (not followed)"
	}
	st, err := os.Stat(t)
	if err != nil {
		return "", "a symbolic link that cannot be resolved"
	}
	if !st.Mode().IsRegular() {
		return "", "a symbolic link to something that is not a regular file (" + describeMode(st.Mode().Type()) + ")"
	}
	return t, ""
}

func describeMode(t fs.FileMode) string {
	switch {
	case t&fs.ModeNamedPipe != 0:
		return "named pipe"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeCharDevice != 0:
		return "character device"
	case t&fs.ModeDevice != 0:
		return "device"
	case t&fs.ModeDir != 0:
		return "directory"
	case t&fs.ModeSymlink != 0:
		return "symbolic link"
	}
	return "irregular file"
}

// loadMarkdownFile reads the card name (opening path open), at most
// MaxCardBytes of it.
func (kb *KB) loadMarkdownFile(ctx context.Context, name, open string) error {
	f, err := input.Open(ctx, open)
	if err != nil {
		return fmt.Errorf("failed to read knowledge base: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(input.Reader(ctx, f), MaxCardBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("failed to read knowledge base: %w", err)
	}
	if len(b) > MaxCardBytes {
		return input.Errorf(name, 0, "card larger than %d MiB (the cap of one card)", MaxCardBytes>>20)
	}
	c, err := ParseMarkdownCard(name, b)
	if err != nil {
		return err
	}
	return kb.add(c)
}

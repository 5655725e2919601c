// Package chunk splits knowledge-base cards into retrieval chunks.
//
// Splitting is paragraph-aware: a card's text is cut into paragraphs at blank
// lines, and consecutive paragraphs are packed into one chunk while the chunk's
// body stays within Params.MaxRunes runes. A paragraph longer than that is cut at
// sentence ends (". ", "? ", "! ", "。"), then at spaces, and only as a last resort
// inside a word. Every chunk's text starts with the card's title on its own line
// (when the card has one), so that a later chunk still carries its topic; the bound
// applies to the body after the title.
//
// Chunk ids derive from the card id: "card#c1", "card#c2", ... in text order. Each
// chunk carries ParentID = card id and the card's Locale.
package chunk

import (
	"fmt"
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
)

// DefaultMaxRunes is the default bound of a chunk body (about 200-300 words).
const DefaultMaxRunes = 1200

// Params are the chunking parameters; they are part of a collection fingerprint.
type Params struct {
	MaxRunes int // bound on a chunk body, in runes; <= 0 means DefaultMaxRunes
}

func (p Params) maxRunes() int {
	if p.MaxRunes <= 0 {
		return DefaultMaxRunes
	}
	return p.MaxRunes
}

// String identifies the parameters (and the algorithm version) in fingerprints.
func (p Params) String() string {
	return fmt.Sprintf("paragraph-v1:max_runes=%d:title=1", p.maxRunes())
}

// Chunk is one retrieval unit.
type Chunk struct {
	ID       string // card id + "#c" + 1-based position
	ParentID string // the card id
	Locale   string // the card's locale
	Text     string // title line (if any) + body
}

// Split chunks every card, in card order. A card with neither title nor text
// yields no chunk.
func Split(cards []kbfile.Card, p Params) []Chunk {
	var out []Chunk
	for _, c := range cards {
		out = append(out, SplitCard(c, p)...)
	}
	return out
}

// SplitCard chunks one card.
func SplitCard(c kbfile.Card, p Params) []Chunk {
	title := strings.TrimSpace(c.Title)
	bodies := pack(paragraphs(c.Text), p.maxRunes())
	if len(bodies) == 0 {
		if title == "" {
			return nil
		}
		bodies = []string{""}
	}
	out := make([]Chunk, len(bodies))
	for i, b := range bodies {
		txt := b
		switch {
		case title != "" && b != "":
			txt = title + "\n\n" + b
		case title != "":
			txt = title
		}
		out[i] = Chunk{ID: fmt.Sprintf("%s#c%d", c.ID, i+1), ParentID: c.ID, Locale: c.Locale, Text: txt}
	}
	return out
}

// paragraphs yields the paragraphs of text (split at blank lines, trimming
// each paragraph and dropping empty ones) one at a time, so that a card of
// millions of lines costs one paragraph, not a slice of its lines (16 MiB of
// newlines took 332 MB).
func paragraphs(text string) iter.Seq[string] {
	return func(yield func(string) bool) {
		text = strings.ReplaceAll(text, "\r\n", "\n")
		var cur strings.Builder
		for ln := range strings.SplitSeq(text, "\n") {
			if strings.TrimSpace(ln) == "" {
				if cur.Len() > 0 {
					if !yield(cur.String()) {
						return
					}
					cur.Reset()
				}
				continue
			}
			if cur.Len() > 0 {
				cur.WriteByte('\n')
			}
			cur.WriteString(strings.TrimRight(ln, " \t"))
		}
		if cur.Len() > 0 {
			yield(cur.String())
		}
	}
}

// pack greedily joins paragraphs (with a blank line) while the result stays
// within max runes; longer paragraphs are first cut into pieces of at most max.
func pack(paras iter.Seq[string], max int) []string {
	var out []string
	cur, curLen := "", 0
	for para := range paras {
		for _, piece := range cutLong(para, max) {
			n := utf8.RuneCountInString(piece)
			switch {
			case curLen == 0:
				cur, curLen = piece, n
			case curLen+2+n <= max:
				cur += "\n\n" + piece
				curLen += 2 + n
			default:
				out = append(out, cur)
				cur, curLen = piece, n
			}
		}
	}
	if curLen > 0 {
		out = append(out, cur)
	}
	return out
}

// cutLong cuts s into pieces of at most max runes, preferring sentence ends,
// then spaces. Linear in len(s): the runes left are counted once and then
// decremented by what each cut removes (recounting the remainder per piece made
// one 8 MB paragraph take half a minute).
func cutLong(s string, max int) []string {
	var out []string
	n := utf8.RuneCountInString(s)
	for n > max {
		limit := byteOffset(s, max) // s[:limit] holds exactly max runes
		cut := lastSentenceEnd(s[:limit])
		if cut <= 0 {
			cut = strings.LastIndexAny(s[:limit], " \t\n")
			if cut > 0 {
				cut++ // keep the space with the left piece; trimmed below
			}
		}
		if cut <= 0 {
			cut = limit
		}
		if piece := strings.TrimSpace(s[:cut]); piece != "" {
			out = append(out, piece)
		}
		// s = strings.TrimSpace(s[cut:]), keeping n in step.
		rest := strings.TrimLeftFunc(s[cut:], unicode.IsSpace)
		head := len(s) - len(rest)
		rest = strings.TrimRightFunc(rest, unicode.IsSpace)
		n -= utf8.RuneCountInString(s[:head]) + utf8.RuneCountInString(s[head+len(rest):])
		s = rest
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// lastSentenceEnd returns the byte offset just after the last sentence end in s,
// or 0 when there is none.
func lastSentenceEnd(s string) int {
	best := 0
	for _, end := range []string{". ", "? ", "! ", ".\n", "?\n", "!\n"} {
		if i := strings.LastIndex(s, end); i >= 0 && i+1 > best {
			best = i + 1
		}
	}
	if i := strings.LastIndex(s, "。"); i >= 0 && i+len("。") > best {
		best = i + len("。")
	}
	return best
}

// byteOffset returns the byte offset of the n-th rune of s (len(s) if shorter).
func byteOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

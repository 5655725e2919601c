package chunk

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
)

func TestSplitCard(t *testing.T) {
	card := func(title, text string) kbfile.Card {
		return kbfile.Card{ID: "en-x", Locale: "en", Title: title, Text: text}
	}
	tests := []struct {
		name string
		card kbfile.Card
		max  int
		want []string
	}{
		{"one paragraph", card("T", "Hello world."), 100, []string{"T\n\nHello world."}},
		{"paragraphs packed", card("T", "aaa\n\nbbb\n\n\nccc"), 100, []string{"T\n\naaa\n\nbbb\n\nccc"}},
		{"paragraph boundary respected", card("T", "aaaa\n\nbbbb\n\ncccc"), 10, []string{"T\n\naaaa\n\nbbbb", "T\n\ncccc"}},
		{"long paragraph cut at sentences", card("", "One two. Three four. Five six."), 12, []string{"One two.", "Three four.", "Five six."}},
		{"long word hard cut", card("", "abcdefghij"), 4, []string{"abcd", "efgh", "ij"}},
		{"cut at space", card("", "alpha beta gamma"), 11, []string{"alpha beta", "gamma"}},
		{"title only", card("Only title", "  \n\n "), 100, []string{"Only title"}},
		{"nothing", card("", ""), 100, nil},
		{"crlf", card("", "a\r\n\r\nb"), 100, []string{"a\n\nb"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SplitCard(tt.card, Params{MaxRunes: tt.max})
			var texts []string
			for i, c := range got {
				texts = append(texts, c.Text)
				assert.Equal(t, "en-x#c"+strconv.Itoa(i+1), c.ID)
				assert.Equal(t, "en-x", c.ParentID)
				assert.Equal(t, "en", c.Locale)
			}
			assert.Equal(t, tt.want, texts)
		})
	}
}

func TestSplitBoundAndCoverage(t *testing.T) {
	words := strings.Fields(strings.Repeat("Ação rápida número um. Segunda frase aqui! ", 80))
	text := strings.Join(words[:200], " ") + "\n\n" + strings.Join(words[200:], " ")
	got := SplitCard(kbfile.Card{ID: "pt", Text: text}, Params{MaxRunes: 150})
	require.NotEmpty(t, got)
	var all []string
	for _, c := range got {
		assert.LessOrEqual(t, utf8.RuneCountInString(c.Text), 150)
		all = append(all, strings.Fields(c.Text)...)
	}
	assert.Equal(t, words, all, "every word kept, in order")
}

func TestParamsString(t *testing.T) {
	assert.Equal(t, Params{}.String(), Params{MaxRunes: DefaultMaxRunes}.String())
	assert.NotEqual(t, Params{MaxRunes: 10}.String(), Params{}.String())
}

// FuzzSplitCard: every chunk body respects the bound, and no non-space character
// is lost, added or reordered.
func FuzzSplitCard(f *testing.F) {
	f.Add("One two. Three four!\n\nFive six seven eight nine.", 12)
	f.Add("ação\r\n\r\n  x  \n\n\n", 1)
	f.Fuzz(func(t *testing.T, text string, max int) {
		if !utf8.ValidString(text) {
			return
		}
		max = 1 + (max%64+64)%64
		got := SplitCard(kbfile.Card{ID: "c", Text: text}, Params{MaxRunes: max})
		var b strings.Builder
		for _, c := range got {
			if n := utf8.RuneCountInString(c.Text); n > max {
				t.Fatalf("chunk of %d runes > %d: %q", n, max, c.Text)
			}
			if strings.TrimSpace(c.Text) == "" {
				t.Fatalf("empty chunk from %q", text)
			}
			b.WriteString(strings.Join(strings.Fields(c.Text), ""))
		}
		want := strings.Join(strings.Fields(text), "")
		if b.String() != want {
			t.Fatalf("characters changed:\n got %q\nwant %q", b.String(), want)
		}
	})
}

// TestCutLongMatchesRecount checks the linear cutLong against the recounting
// definition it replaced, on texts with every kind of break and Unicode space.
func TestCutLongMatchesRecount(t *testing.T) {
	ref := func(s string, max int) []string {
		var out []string
		for utf8.RuneCountInString(s) > max {
			limit := byteOffset(s, max)
			cut := lastSentenceEnd(s[:limit])
			if cut <= 0 {
				cut = strings.LastIndexAny(s[:limit], " \t\n")
				if cut > 0 {
					cut++
				}
			}
			if cut <= 0 {
				cut = limit
			}
			if piece := strings.TrimSpace(s[:cut]); piece != "" {
				out = append(out, piece)
			}
			s = strings.TrimSpace(s[cut:])
		}
		if s != "" {
			out = append(out, s)
		}
		return out
	}
	texts := []string{
		strings.Repeat("word ", 500), strings.Repeat("Sentence one. Two? Three! ", 80),
		strings.Repeat("x", 3000), "  \u00a0lead " + strings.Repeat("ação。", 400) + " \u2003 ",
		strings.Repeat("a\u0085b ", 700), "",
	}
	for _, s := range texts {
		for _, max := range []int{1, 7, 64, 1200} {
			assert.Equal(t, ref(s, max), cutLong(s, max), "max %d", max)
		}
	}
}

// BenchmarkSplitCardLongParagraph is issue 10's case: one 8 MB paragraph (words,
// no blank line). Quadratic before (about 30 s); linear now.
func BenchmarkSplitCardLongParagraph(b *testing.B) {
	text := strings.Repeat("lorem ipsum dolor sit amet consectetur ", 8<<20/40)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if len(SplitCard(kbfile.Card{ID: "c", Text: text}, Params{})) == 0 {
			b.Fatal("no chunks")
		}
	}
}

// TestParagraphsAsBefore: the paragraphs yielded one at a time are those of the
// slice-building split they replace, on random texts of blank, white-space
// and word lines with LF and CRLF ends; and a card of millions of blank lines
// is chunked without a slice of its lines.
func TestParagraphsAsBefore(t *testing.T) {
	ref := func(text string) []string {
		text = strings.ReplaceAll(text, "\r\n", "\n")
		var out, cur []string
		flush := func() {
			if len(cur) > 0 {
				out = append(out, strings.Join(cur, "\n"))
				cur = cur[:0]
			}
		}
		for _, ln := range strings.Split(text, "\n") {
			if strings.TrimSpace(ln) == "" {
				flush()
				continue
			}
			cur = append(cur, strings.TrimRight(ln, " \t"))
		}
		flush()
		return out
	}
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"\n", "\r\n", " ", "\t", "a", "b c", "\u00a0", "\v", "x \t", "\r"}
	for range 5000 {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		text := b.String()
		got := slices.Collect(paragraphs(text))
		assert.Equal(t, ref(text), got, "%q", text)
	}
	var before, after runtime.MemStats
	text := strings.Repeat("\n", 8<<20) + "a\n"
	runtime.ReadMemStats(&before)
	n := len(SplitCard(kbfile.Card{ID: "c", Text: text}, Params{}))
	runtime.ReadMemStats(&after)
	assert.Equal(t, 1, n)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20), "bytes allocated to chunk 8 MiB of newlines")
}

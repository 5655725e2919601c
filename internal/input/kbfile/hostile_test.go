package kbfile

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/unixtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoadKBDirSkipsWhatIsNotARegularFile: issue 10 item 9. A FIFO and a symlink
// to /dev/zero named *.md are skipped (and said so), a symlink out of the KB is
// not followed, a symlink inside it is; loading does not hang or grow.
func TestLoadKBDirSkipsWhatIsNotARegularFile(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a.md":          "---\nid: a\n---\nalpha\n",
		"sub/b.md":      "---\nid: b\n---\nbeta\n",
		"../outside.md": "---\nid: secret\n---\nsecret text\n",
	})
	unixtest.Mkfifo(t, filepath.Join(dir, "fifo.md"), 0o644)
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "zero.md")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "..", "outside.md"), filepath.Join(dir, "escape.md")))
	require.NoError(t, os.Symlink("sub/b.md", filepath.Join(dir, "link-to-b.md")))
	require.NoError(t, os.Symlink("missing.md", filepath.Join(dir, "dangling.md")))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err := Load(ctx, dir)
	// link-to-b.md is followed (inside the KB) and repeats card b.
	require.ErrorContains(t, err, `duplicate card id "b"`)
	require.Less(t, time.Since(start), 2*time.Second)

	require.NoError(t, os.Remove(filepath.Join(dir, "link-to-b.md")))
	kb, err := Load(ctx, dir)
	require.NoError(t, err)
	var ids []string
	for _, c := range kb.Cards {
		ids = append(ids, c.ID)
	}
	assert.Equal(t, []string{"a", "b"}, ids)
	require.Len(t, kb.Skipped, 4)
	joined := strings.Join(kb.Skipped, "\n")
	assert.Contains(t, joined, "dangling.md: a symbolic link that cannot be resolved")
	assert.Contains(t, joined, "escape.md: a symbolic link out of the knowledge-base directory (not followed)")
	assert.Contains(t, joined, "fifo.md: not a regular file (named pipe)")
	assert.Contains(t, joined, "zero.md: a symbolic link out of the knowledge-base directory (not followed)")
}

// TestLoadKBCardCap: a card over MaxCardBytes is an input error, read no further.
func TestLoadKBCardCap(t *testing.T) {
	dir := t.TempDir()
	big := "---\nid: big\n---\n" + strings.Repeat("x", MaxCardBytes)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.md"), []byte(big), 0o644))
	_, err := Load(context.Background(), dir)
	require.ErrorContains(t, err, "big.md: card larger than 16 MiB")

	jl := filepath.Join(t.TempDir(), "kb.jsonl")
	require.NoError(t, os.WriteFile(jl, []byte(`{"id":"a","text":"`+strings.Repeat("x", MaxCardBytes)+`"}`+"\n"), 0o644))
	_, err = Load(context.Background(), jl)
	require.ErrorContains(t, err, "kb.jsonl:1: line longer than 16 MiB")
}

// TestLoadKBFromFIFOStopsOnCancel: issue 10 item 11. A JSONL KB named as a FIFO
// whose writer never writes (or never opens it) stops within a second of ctx.
func TestLoadKBFromFIFOStopsOnCancel(t *testing.T) {
	for _, writer := range []bool{false, true} {
		fifo := filepath.Join(t.TempDir(), "kb.jsonl")
		unixtest.Mkfifo(t, fifo, 0o644)
		if writer {
			done := make(chan struct{})
			defer close(done)
			go func() {
				w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
				if err == nil {
					<-done
					w.Close()
				}
			}()
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		_, err := Load(ctx, fifo)
		require.ErrorIs(t, err, context.Canceled, "writer %v", writer)
		assert.Less(t, time.Since(start), time.Second, "writer %v", writer)
	}
}

func TestFrontMatterRepeatedKey(t *testing.T) {
	_, err := ParseMarkdownCard("kb/a.md", []byte("---\nid: a\ntitle: T\nid: b\n---\ntext\n"))
	require.EqualError(t, err, `kb/a.md:4: duplicate key "id" in the front matter (first on line 2)`)
}

// A card's front matter is capped (MaxFrontMatter) before the YAML library
// builds its tree (8 MiB of "[0,0,…]" took 870 MB); at the cap it is read.
func TestFrontMatterCap(t *testing.T) {
	fm := func(n int) []byte { // front matter of n bytes with its newline
		return []byte("---\nid: a\nx: [" + strings.Repeat("0,", (n-len("id: a\nx: [0]\n"))/2) + "0]\n---\ntext\n")
	}
	c, err := ParseMarkdownCard("kb/a.md", fm(MaxFrontMatter))
	require.NoError(t, err)
	assert.Equal(t, "a", c.ID)
	_, err = ParseMarkdownCard("kb/a.md", fm(MaxFrontMatter+2))
	require.EqualError(t, err, "kb/a.md:1: front matter longer than 256 KiB (the cap on what a card may take in memory: a YAML tree takes about a hundred bytes per byte of input)")
}

func TestKBJSONLDuplicateKey(t *testing.T) {
	kb := &KB{Path: "kb.jsonl"}
	err := kb.readJSONL(context.Background(), strings.NewReader(`{"id":"a","text":"x"}`+"\n"+`{"id":"b","text":"x","text":"y"}`+"\n"), "kb.jsonl")
	require.EqualError(t, err, `kb.jsonl:2: duplicate key "text" at column 22`)
}

// TestLoadKBThroughALinkToTheDirectory: issue 32 item 11. A KB named through a
// symbolic link to its directory (kb -> shared/kb) is that directory's cards,
// named under the link as given, with the same refusals inside it: a FIFO is
// skipped, a link out of the (resolved) directory is not followed, one inside it
// is.
func TestLoadKBThroughALinkToTheDirectory(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a.md":          "---\nid: a\n---\nalpha\n",
		"sub/b.md":      "---\nid: b\n---\nbeta\n",
		"../outside.md": "---\nid: secret\n---\nsecret text\n",
	})
	unixtest.Mkfifo(t, filepath.Join(dir, "fifo.md"), 0o644)
	require.NoError(t, os.Symlink(filepath.Join(dir, "..", "outside.md"), filepath.Join(dir, "escape.md")))
	require.NoError(t, os.Symlink("b.md", filepath.Join(dir, "sub", "link-to-b.md")))
	links := t.TempDir()
	for _, link := range []string{filepath.Join(links, "kb"), filepath.Join(links, "kb2")} {
		require.NoError(t, os.Symlink(dir, link))
	}
	// A link to the link: resolved all the way.
	require.NoError(t, os.Remove(filepath.Join(links, "kb2")))
	require.NoError(t, os.Symlink(filepath.Join(links, "kb"), filepath.Join(links, "kb2")))

	for _, given := range []string{filepath.Join(links, "kb"), filepath.Join(links, "kb") + "/", filepath.Join(links, "kb2")} {
		t.Run(filepath.Base(given), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := Load(ctx, given)
			// sub/link-to-b.md resolves inside the directory: followed, and card b twice.
			require.ErrorContains(t, err, `duplicate card id "b"`)
			require.ErrorContains(t, err, filepath.Join(filepath.Clean(given), "sub", "link-to-b.md"))
		})
	}
	require.NoError(t, os.Remove(filepath.Join(dir, "sub", "link-to-b.md")))
	given := filepath.Join(links, "kb")
	kb, err := Load(context.Background(), given)
	require.NoError(t, err)
	var ids, files []string
	for _, c := range kb.Cards {
		ids = append(ids, c.ID)
		files = append(files, c.File)
	}
	assert.Equal(t, []string{"a", "b"}, ids)
	assert.Equal(t, []string{filepath.Join(given, "a.md"), filepath.Join(given, "sub", "b.md")}, files, "named under the link, as given")
	assert.Equal(t, []string{
		filepath.Join(given, "escape.md") + ": a symbolic link out of the knowledge-base directory (not followed)",
		filepath.Join(given, "fifo.md") + ": not a regular file (named pipe)",
	}, kb.Skipped)
}

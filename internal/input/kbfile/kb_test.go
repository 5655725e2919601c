package kbfile

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// writeFiles creates files (relative path -> content) under a fresh temp dir.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return dir
}

func TestLoadKBJSONL(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    []Card // File is filled in by the test
		wantErr string // suffix after "<path>:"
	}{
		{
			name: "basic with blank lines and unknown fields",
			content: `{"id":"en-a","locale":"en","title":"A","text":"alpha","extra":{"x":[1,2]}}` + "\n\n   \n" +
				`{"id":"es-b","locale":"es-419","title":"B","text":"b\u00e9ta"}` + "\n",
			want: []Card{
				{ID: "en-a", Locale: "en", Title: "A", Text: "alpha", Line: 1},
				{ID: "es-b", Locale: "es-419", Title: "B", Text: "béta", Line: 4},
			},
		},
		{
			name:    "CRLF and BOM, last line without newline",
			content: "\xEF\xBB\xBF" + `{"id":"a","text":"x"}` + "\r\n\r\n" + `{"id":"b","title":null}`,
			want: []Card{
				{ID: "a", Text: "x", Line: 1},
				{ID: "b", Line: 3},
			},
		},
		{name: "malformed", content: `{"id":"a"}` + "\n" + `{"id":`, wantErr: `2: malformed JSON: `},
		{name: "not an object", content: `["a"]`, wantErr: `1: a card must be a JSON object, got array`},
		{name: "missing id", content: `{"title":"t"}`, wantErr: `1: card has no "id"`},
		{name: "numeric id", content: `{"id":12}`, wantErr: `1: card field "id" must be a string, got number`},
		{name: "null id", content: `{"id":null}`, wantErr: `1: card field "id" must be a string, got null`},
		{name: "empty id", content: `{"id":""}`, wantErr: `1: card "id" is empty`},
		{name: "bad title", content: `{"id":"a","title":["x"]}`, wantErr: `1: card field "title" must be a string, got array`},
		{name: "bad text", content: `{"id":"a","text":false}`, wantErr: `1: card field "text" must be a string, got false`},
		{name: "duplicate", content: `{"id":"a"}` + "\n" + `{"id":"b"}` + "\n\n" + `{"id":"a"}`,
			wantErr: `4: duplicate card id "a" (first defined at {path}:1)`},
		// Issue 32 item 10: a cases file given as the KB is refused as one, not
		// read as a card per case.
		{name: "a cases file", content: `{"id": "q1", "locale": "en", "query": "reset my password", "must_cite_one_of": ["en-reset"]}` + "\n",
			wantErr: `1: looks like a cases file (a "query" and no "text" or "title"), not a knowledge base: a KB is cards {"id", "locale", "title", "text"}, one per line, or a directory of Markdown cards`},
		{name: "a cases file after a card", content: `{"id": "a", "text": "x"}` + "\n" + `{"id": "q1", "query": "x"}` + "\n",
			wantErr: `2: looks like a cases file (a "query" and no "text" or "title"), not a knowledge base`},
		{name: "empty file", content: "", wantErr: ` knowledge base has no cards`},
		{name: "only blank lines", content: "\n \r\n", wantErr: ` knowledge base has no cards`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"kb.jsonl": tt.content})
			path := filepath.Join(dir, "kb.jsonl")
			kb, err := Load(context.Background(), path)
			if tt.wantErr != "" {
				require.Error(t, err)
				var de *input.Error
				require.ErrorAs(t, err, &de, "want *input.Error, got %T", err)
				want := path + ":" + strings.ReplaceAll(tt.wantErr, "{path}", path)
				assert.True(t, strings.HasPrefix(err.Error(), want), "got %q, want prefix %q", err.Error(), want)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, path, kb.Path)
			for i := range tt.want {
				tt.want[i].File = path
			}
			assert.Equal(t, tt.want, kb.Cards)
			assert.Equal(t, len(tt.want), kb.Len())
			for _, c := range tt.want {
				assert.True(t, kb.Has(c.ID))
				got, ok := kb.Card(c.ID)
				require.True(t, ok)
				assert.Equal(t, c, got)
			}
			assert.False(t, kb.Has("nope"))
			_, ok := kb.Card("nope")
			assert.False(t, ok)
		})
	}
}

func TestLoadKBJSONLLongLine(t *testing.T) {
	text := strings.Repeat("x", 3<<20) // longer than any default buffer
	dir := writeFiles(t, map[string]string{"kb.jsonl": `{"id":"big","text":"` + text + `"}` + "\n" + `{"id":"small"}`})
	kb, err := Load(context.Background(), filepath.Join(dir, "kb.jsonl"))
	require.NoError(t, err)
	require.Len(t, kb.Cards, 2)
	assert.Equal(t, text, kb.Cards[0].Text)
	assert.Equal(t, 2, kb.Cards[1].Line)
}

func TestLoadKBMarkdown(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		want    []Card // File relative to the dir, slash-separated
		wantErr string // with {dir} for the directory
	}{
		{
			name: "front matter, defaults, recursion and sorted order",
			files: map[string]string{
				"en/reset.md":      "---\nid: en-reset-password\nlocale: en\ntitle: Reset your password\n---\nGo to settings.\n",
				"en/two-factor.md": "---\nlocale: en\ntitle: \"Two: factor\"\ntags: [a, b]\n---\n\n# 2FA\nText.",
				"a.md":             "No front matter here.\n--- not a delimiter\n",
				"es/sub/x.md":      "---\nid: es-x\n...\nbody\n",
				"notes.txt":        "ignored",
				".git/x.md":        "---\nid: hidden-dir\n---\n",
				"en/.draft.md":     "hidden file",
				"UPPER.MD":         "upper-case extension",
				"pt/empty-fm.md":   "---\n---\nbody only",
			},
			want: []Card{
				{ID: "UPPER", Text: "upper-case extension", File: "UPPER.MD", Line: 1},
				{ID: "a", Text: "No front matter here.\n--- not a delimiter\n", File: "a.md", Line: 1},
				{ID: "en-reset-password", Locale: "en", Title: "Reset your password", Text: "Go to settings.\n", File: "en/reset.md", Line: 2},
				{ID: "two-factor", Locale: "en", Title: "Two: factor", Text: "\n# 2FA\nText.", File: "en/two-factor.md", Line: 1},
				{ID: "es-x", Text: "body\n", File: "es/sub/x.md", Line: 2},
				{ID: "empty-fm", Text: "body only", File: "pt/empty-fm.md", Line: 1},
			},
		},
		{
			name: "CRLF and BOM",
			files: map[string]string{
				"c.md": "\xEF\xBB\xBF---\r\nid: crlf-card\r\nlocale: pt-BR\r\ntitle: T\r\n---\r\nline 1\r\nline 2\r\n",
			},
			want: []Card{{ID: "crlf-card", Locale: "pt-BR", Title: "T", Text: "line 1\nline 2\n", File: "c.md", Line: 2}},
		},
		{
			name:  "classic Mac line ends",
			files: map[string]string{"mac.md": "---\rid: mac\r---\rline 1\rline 2\r\r\n"},
			want:  []Card{{ID: "mac", Text: "line 1\nline 2\n\n", File: "mac.md", Line: 2}},
		},
		{
			name:  "numeric id and null title",
			files: map[string]string{"n.md": "---\nid: 123\ntitle: ~\n---\nx"},
			want:  []Card{{ID: "123", Text: "x", File: "n.md", Line: 2}},
		},
		{
			name:  "front matter up to end of file",
			files: map[string]string{"e.md": "---\nid: e1\n---"},
			want:  []Card{{ID: "e1", File: "e.md", Line: 2}},
		},
		{
			name: "duplicate ids name both places",
			files: map[string]string{
				"a/one.md": "---\ntitle: x\nid: dup\n---\n",
				"b/two.md": "---\nid: dup\n---\n",
			},
			wantErr: "{dir}/b/two.md:2: duplicate card id \"dup\" (first defined at {dir}/a/one.md:3)",
		},
		{
			name: "duplicate of a default id",
			files: map[string]string{
				"a/same.md": "x",
				"b/same.md": "y",
			},
			wantErr: "{dir}/b/same.md:1: duplicate card id \"same\" (first defined at {dir}/a/same.md:1)",
		},
		{
			name:    "YAML syntax error with the line inside the file",
			files:   map[string]string{"bad.md": "---\nid: ok\ntitle: [unclosed\nlocale: en\n---\nbody"},
			wantErr: "{dir}/bad.md:",
		},
		{
			name:    "YAML tab indentation error line",
			files:   map[string]string{"tab.md": "---\nid: ok\nlocale: en\n\ttitle: x\n---\n"},
			wantErr: "{dir}/tab.md:3: invalid YAML front matter: found a tab character that violates indentation", // yaml.v3 reports the line where the mapping entry began
		},
		{
			name:    "front matter not a mapping",
			files:   map[string]string{"list.md": "---\n- a\n- b\n---\n"},
			wantErr: "{dir}/list.md:2: front matter must be a YAML mapping of keys to values",
		},
		{
			name:    "id not a scalar",
			files:   map[string]string{"m.md": "---\nlocale: en\nid:\n  a: b\n---\n"},
			wantErr: "{dir}/m.md:3: front matter \"id\" must be a string",
		},
		{
			name:    "title a list",
			files:   map[string]string{"m.md": "---\ntitle: [a]\n---\n"},
			wantErr: "{dir}/m.md:2: front matter \"title\" must be a string",
		},
		{
			name:    "empty id",
			files:   map[string]string{"m.md": "---\nid: \"\"\n---\n"},
			wantErr: "{dir}/m.md:2: card has an empty id",
		},
		{
			name:    "unclosed front matter",
			files:   map[string]string{"u.md": "---\nid: x\nbody without end\n"},
			wantErr: "{dir}/u.md:1: front matter opened by --- is not closed",
		},
		{
			name:    "no cards",
			files:   map[string]string{"README.txt": "x"},
			wantErr: "{dir}: knowledge base has no cards (no *.md files found)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, tt.files)
			kb, err := Load(context.Background(), dir)
			if tt.wantErr != "" {
				require.Error(t, err)
				var de *input.Error
				require.ErrorAs(t, err, &de, "want *input.Error, got %T: %v", err, err)
				want := strings.ReplaceAll(tt.wantErr, "{dir}/", dir+string(filepath.Separator))
				want = strings.ReplaceAll(want, "{dir}", dir)
				assert.True(t, strings.HasPrefix(err.Error(), want), "got %q, want prefix %q", err.Error(), want)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, dir, kb.Path)
			for i := range tt.want {
				tt.want[i].File = filepath.Join(dir, filepath.FromSlash(tt.want[i].File))
			}
			assert.Equal(t, tt.want, kb.Cards)
			for _, c := range tt.want {
				got, ok := kb.Card(c.ID)
				require.True(t, ok, c.ID)
				assert.Equal(t, c, got)
			}
		})
	}
}

func TestLoadKBYAMLErrorLine(t *testing.T) {
	// The YAML error is on file line 4 (front matter line 3).
	dir := writeFiles(t, map[string]string{"bad.md": "---\nid: ok\nlocale: en\ntitle: \"unterminated\n---\nbody"})
	_, err := Load(context.Background(), dir)
	require.Error(t, err)
	var de *input.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, filepath.Join(dir, "bad.md"), de.File)
	assert.GreaterOrEqual(t, de.Line, 4)
	assert.LessOrEqual(t, de.Line, 5)
	assert.Contains(t, de.Msg, "invalid YAML front matter")
}

func TestLoadKBSingleMarkdownFile(t *testing.T) {
	dir := writeFiles(t, map[string]string{"one.md": "---\nid: solo\n---\nhi\n"})
	kb, err := Load(context.Background(), filepath.Join(dir, "one.md"))
	require.NoError(t, err)
	require.Len(t, kb.Cards, 1)
	assert.Equal(t, "solo", kb.Cards[0].ID)
}

func TestLoadKBMissingPath(t *testing.T) {
	_, err := Load(context.Background(), filepath.Join(t.TempDir(), "nope.jsonl"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "failed to read knowledge base")
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// Package judge grades (query, document) pairs with an LLM relevance judge on the
// 4-point scale (3 highly relevant, 2 relevant, 1 partially relevant, 0 not
// relevant, including a document in another language than the query's): it pools
// the top k of every run per query, asks an OpenAI-compatible chat server (see
// package llm) once per pair and repeat, parses the answer strictly, keeps every
// answer in an append-only content-addressed cache, and writes graded qrels
// (TREC and JSONL) that compare reads.
package judge

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
)

// DefaultPromptVersion names the embedded prompt, prompts/relevance-v2.txt.
// v2 (issue 20 item 13): the instructions are the system message and the query
// and the document the user message, between tags no text can close
// (Messages); v1 sent both as one user message.
const DefaultPromptVersion = "relevance-v2"

//go:embed prompts/relevance-v2.txt
var defaultPrompt string

// Placeholders of a prompt template.
const (
	QueryPlaceholder    = "{{query}}"
	DocumentPlaceholder = "{{document}}"
	FormatPlaceholder   = "{{answer_format}}"
)

// Prompt is a judge prompt template: the instructions, sent as the system
// message (see Messages).
type Prompt struct {
	Version  string // DefaultPromptVersion, or "file:" + base name for --prompt
	Hash     string // "sha256:" + hex of the template bytes
	Template string
}

// DefaultPrompt is the embedded, versioned prompt.
func DefaultPrompt() *Prompt { return newPrompt(DefaultPromptVersion, defaultPrompt) }

// MaxPromptBytes caps a prompt template file (judge's and generate's --prompt,
// which the front end reads): a template is a few KiB; the query and document
// it receives are capped apart.
const MaxPromptBytes = 1 << 20

// ParsePrompt is the template read from the file at path (--prompt; the front
// end reads it): it must hold {{query}} and {{document}}. Its version is
// "file:" and the file's base name.
func ParsePrompt(path string, b []byte) (*Prompt, error) {
	t, err := PromptText(path, b)
	if err != nil {
		return nil, err
	}
	if err := CheckPlaceholders(path, t, QueryPlaceholder, DocumentPlaceholder, FormatPlaceholder); err != nil {
		return nil, err
	}
	for _, ph := range []string{QueryPlaceholder, DocumentPlaceholder} {
		if !strings.Contains(t, ph) {
			return nil, input.Errorf(path, 0, "prompt template has no %s placeholder", ph)
		}
	}
	return newPrompt("file:"+filepath.Base(path), t), nil
}

// PromptText is the text of a prompt template file (judge's and generate's
// --prompt) read from path: without a UTF-8 byte order mark, which every
// reader drops (a template saved with one sent U+FEFF to the model and had
// another hash than the same template without, so other cache keys), and
// valid UTF-8 (an invalid byte reached the model as U+FFFD, another text than
// the one hashed): an invalid byte is an error at its line.
func PromptText(path string, b []byte) (string, error) {
	b = input.TrimBOM(b)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return "", input.Errorf(path, 1+bytes.Count(b[:i], []byte("\n")), "the prompt template is not valid UTF-8 (byte 0x%02x)", b[i])
		}
		i += n
	}
	return string(b), nil
}

// placeholderRE is what a template's author writes as a placeholder: a name
// between double braces, spaces allowed inside them.
var placeholderRE = regexp.MustCompile(`\{\{\s*[A-Za-z_][A-Za-z0-9_.-]*\s*\}\}`)

// CheckPlaceholders refuses a placeholder of the template t (read from path)
// that is none of known, at its line: it would be sent to the model as it is
// ({{documents}}, {{ query }} and {{answer_fromat}} are not replaced), where the
// author meant a value.
func CheckPlaceholders(path, t string, known ...string) error {
	for _, loc := range placeholderRE.FindAllStringIndex(t, -1) {
		ph := t[loc[0]:loc[1]]
		if slices.Contains(known, ph) {
			continue
		}
		line := 1 + strings.Count(t[:loc[0]], "\n")
		return input.Errorf(path, line, "unknown placeholder %q in the prompt template (it knows %s)", ph, strings.Join(known, ", "))
	}
	return nil
}

func newPrompt(version, t string) *Prompt {
	return &Prompt{Version: version, Hash: HashText(t), Template: t}
}

// HashText is "sha256:" + the hex SHA-256 of s.
func HashText(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(h[:])
}

// Answer formats.
const (
	FormatJSON = "json" // response_format json_schema {"reason", "score"}
	FormatText = "text" // a last line "Final score: N"
)

// formatInstruction replaces {{answer_format}}; a template without the
// placeholder gets it appended.
var formatInstruction = map[string]string{
	FormatJSON: `Answer with a JSON object {"reason": "<one short sentence>", "score": <0, 1, 2 or 3>}.`,
	FormatText: `Write one short sentence of reasoning, then, on the last line, exactly "Final score: N" where N is 0, 1, 2 or 3.`,
}

// Messages is the conversation asking for one grade. The system message is the
// template, its instructions: {{query}} and {{document}} are replaced by the
// tags that enclose the query and the document, {{answer_format}} by the
// instruction of the answer format. The user message holds only the query and
// the document, each between an opening and a closing tag whose name ends with
// a tag id (TagID) that occurs in neither text: no document can close its tag
// and write outside it, whatever it contains ("</document>", "Final score: 3").
func (p *Prompt) Messages(query, document, format string) []llm.Message {
	id := TagID(query, document)
	qo, qc := "<query-"+id+">", "</query-"+id+">"
	do, dc := "<document-"+id+">", "</document-"+id+">"
	t := p.Template
	if !strings.Contains(t, FormatPlaceholder) {
		t = strings.TrimRight(t, "\n") + "\n\n" + FormatPlaceholder + "\n"
	}
	system := strings.NewReplacer(QueryPlaceholder, qo+"…"+qc, DocumentPlaceholder, do+"…"+dc,
		FormatPlaceholder, formatInstruction[format]).Replace(t)
	user := qo + "\n" + query + "\n" + qc + "\n\n" + do + "\n" + document + "\n" + dc + "\n"
	return []llm.Message{{Role: "system", Content: system}, {Role: "user", Content: user}}
}

// TagID is the id that ends the tags around texts sent to a model: 16 hex
// digits of the SHA-256 of the texts (and a counter), the first such id that
// occurs in none of them. It is deterministic (the same texts give the same
// messages, so a server's prompt cache and a replay see the same bytes) and a
// text cannot contain it: the id depends on the text, and one that happens to
// be in it is replaced by the next.
func TagID(texts ...string) string {
	for i := 0; ; i++ {
		h := sha256.New()
		_, _ = fmt.Fprintf(h, "retrieval-gate-tag\x00%d", i)
		for _, t := range texts {
			_, _ = fmt.Fprintf(h, "\x00%d\x00", len(t))
			_, _ = io.WriteString(h, t)
		}
		id := hex.EncodeToString(h.Sum(nil)[:8])
		clash := false
		for _, t := range texts {
			clash = clash || strings.Contains(t, id)
		}
		if !clash {
			return id
		}
	}
}

// DocumentText is the text of a card shown to the judge: its title, a blank
// line and its text (the text alone when it has no title).
func DocumentText(c kbfile.Card) string {
	if strings.TrimSpace(c.Title) == "" {
		return c.Text
	}
	return c.Title + "\n\n" + c.Text
}

// answerSchema is the JSON schema of a structured answer.
const answerSchema = `{"type": "object", "properties": {"reason": {"type": "string"}, "score": {"type": "integer", "enum": [0, 1, 2, 3]}}, "required": ["reason", "score"], "additionalProperties": false}`

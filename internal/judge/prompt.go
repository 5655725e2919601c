// Package judge grades (query, document) pairs with an LLM relevance judge on the
// 4-point scale (3 highly relevant, 2 relevant, 1 partially relevant, 0 not
// relevant, including a document in another language than the query's): it pools
// the top k of every run per query, asks an OpenAI-compatible chat server (see
// package llm) once per pair and repeat, parses the answer strictly, keeps every
// answer in an append-only content-addressed cache, and writes graded qrels
// (TREC and JSONL) that compare reads.
package judge

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
)

// DefaultPromptVersion names the embedded prompt, prompts/relevance-v1.txt.
const DefaultPromptVersion = "relevance-v1"

//go:embed prompts/relevance-v1.txt
var defaultPrompt string

// Placeholders of a prompt template.
const (
	QueryPlaceholder    = "{{query}}"
	DocumentPlaceholder = "{{document}}"
	FormatPlaceholder   = "{{answer_format}}"
)

// Prompt is a judge prompt template, sent as the user message.
type Prompt struct {
	Version  string // DefaultPromptVersion, or "file:" + base name for --prompt
	Hash     string // "sha256:" + hex of the template bytes
	Template string
}

// DefaultPrompt is the embedded, versioned prompt.
func DefaultPrompt() *Prompt { return newPrompt(DefaultPromptVersion, defaultPrompt) }

// LoadPrompt reads a template; it must hold {{query}} and {{document}}.
func LoadPrompt(path string) (*Prompt, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read the prompt: %w", err)
	}
	t := string(b)
	for _, ph := range []string{QueryPlaceholder, DocumentPlaceholder} {
		if !strings.Contains(t, ph) {
			return nil, input.Errorf(path, 0, "prompt template has no %s placeholder", ph)
		}
	}
	return newPrompt("file:"+filepath.Base(path), t), nil
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

// Render fills the template for one pair.
func (p *Prompt) Render(query, document, format string) string {
	inst := formatInstruction[format]
	t := p.Template
	if !strings.Contains(t, FormatPlaceholder) {
		t = strings.TrimRight(t, "\n") + "\n\n" + FormatPlaceholder + "\n"
	}
	return strings.NewReplacer(QueryPlaceholder, query, DocumentPlaceholder, document, FormatPlaceholder, inst).Replace(t)
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

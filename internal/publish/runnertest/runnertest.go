// Package runnertest reads text as the GitHub Actions runner reads a step's output,
// for tests: it splits the text into lines as the runner's StreamReader.ReadLine
// does and finds the workflow commands in them following the runner's
// ActionCommand.TryParseV2 ("::name props::data" after leading white space) and
// ActionCommand.TryParse (legacy "##[name props]data" anywhere in a line). It is a
// reimplementation of the rules, not the runner's code.
//
// Two details of the runner make it find more than an ordinal reading would:
// TrimStart removes every character .NET's char.IsWhiteSpace accepts, and
// StartsWith/IndexOf compare with the current culture, under which ICU ignores
// default-ignorable characters (U+00AD, U+200B–U+200F, U+2060, U+FEFF, variation
// selectors, C0 controls such as NUL …). Commands therefore reports what the
// ordinal rules find, and also what they find once every ignorable character is
// removed from the line: a guard that passes this reading is safe under both.
package runnertest

import (
	"strings"
	"unicode"
)

// Command is one workflow command the runner would execute.
type Command struct {
	Line   int    // 1-based line number
	Syntax string // "::" or "##["
	Name   string
	Info   string // the name and properties: between "::" and "::", or "##[" and "]"
	Data   string
	Text   string // the whole line
}

// IsWhiteSpace is .NET's char.IsWhiteSpace, which string.Trim/TrimStart use:
// U+0009–U+000D, U+0020, U+0085, U+00A0 and the Unicode separators (Zs, Zl, Zp:
// U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000).
func IsWhiteSpace(r rune) bool {
	switch {
	case r >= 0x09 && r <= 0x0d, r == 0x20, r == 0x85, r == 0xa0:
		return true
	}
	return r > 0xff && (unicode.Is(unicode.Zs, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r))
}

// Ignorable reports whether a culture-sensitive comparison may skip r: C0/C1
// controls, format characters (Cf), Unicode's other default-ignorable code
// points and variation selectors.
func Ignorable(r rune) bool {
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Variation_Selector, r)
}

// Lines splits text as StreamReader.ReadLine does: "\n", "\r" and "\r\n" end a
// line; a last line without an end is still a line; an empty text has none.
func Lines(text string) []string {
	var lines []string
	for len(text) > 0 {
		i := strings.IndexAny(text, "\r\n")
		if i < 0 {
			lines = append(lines, text)
			break
		}
		lines = append(lines, text[:i])
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			i++
		}
		text = text[i+1:]
	}
	return lines
}

// Commands lists the commands the runner would find in text. registered holds
// the command names it knows, compared case-insensitively; nil accepts every
// non-empty name (after ::stop-commands::, the stop token is a command too).
func Commands(text string, registered []string) []Command {
	var cmds []Command
	for i, line := range Lines(text) {
		for _, l := range []string{line, strings.Map(func(r rune) rune {
			if Ignorable(r) {
				return -1
			}
			return r
		}, line)} {
			if c, ok := Parse(l, registered); ok {
				c.Line, c.Text = i+1, line
				cmds = append(cmds, c)
				break
			}
		}
	}
	return cmds
}

// Parse is TryParseV2, then TryParse, on one line, with ordinal comparisons.
func Parse(line string, registered []string) (Command, bool) {
	if c, ok := parseV2(line, registered); ok {
		return c, true
	}
	return parseLegacy(line, registered)
}

func known(name string, registered []string) bool {
	if name == "" {
		return false // new ActionCommand("") throws; TryParse returns false
	}
	if registered == nil {
		return true
	}
	for _, r := range registered {
		if strings.EqualFold(r, name) {
			return true
		}
	}
	return false
}

func parseV2(line string, registered []string) (Command, bool) {
	msg := strings.TrimLeftFunc(line, IsWhiteSpace)
	if !strings.HasPrefix(msg, "::") {
		return Command{}, false
	}
	end := strings.Index(msg[2:], "::")
	if end < 0 {
		return Command{}, false
	}
	info := msg[2 : 2+end]
	name, _, _ := strings.Cut(info, " ")
	if !known(name, registered) {
		return Command{}, false
	}
	return Command{Syntax: "::", Name: name, Info: info, Data: msg[2+end+2:]}, true
}

func parseLegacy(line string, registered []string) (Command, bool) {
	p := strings.Index(line, "##[")
	if p < 0 {
		return Command{}, false
	}
	rb := strings.IndexByte(line[p:], ']')
	if rb < 0 {
		return Command{}, false
	}
	info := line[p+3 : p+rb]
	name, _, _ := strings.Cut(info, " ")
	if !known(name, registered) {
		return Command{}, false
	}
	return Command{Syntax: "##[", Name: name, Info: info, Data: line[p+rb+1:]}, true
}

// Registered is the runner's own list of commands (its command extensions and
// stop-commands).
var Registered = []string{
	"add-mask", "add-matcher", "add-path", "debug", "echo", "endgroup", "error", "group",
	"internal-set-repo-path", "notice", "remove-matcher", "save-state", "set-env",
	"set-output", "stop-commands", "warning",
}

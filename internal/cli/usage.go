package cli

// A mistake on the command line gets advice, not a dump (issue 32 item 10):
// the flag package's own messages ("flag provided but not defined: -case",
// `invalid value "five" for flag -k: parse error`) followed by every flag with
// a single dash become one line that names the flag as it is written, says what
// it wants, and offers the nearest flag for a misspelled one, followed by the
// command's two-line usage. --help (and `retrieval-gate help COMMAND`) prints
// the whole help, each flag with its double dash, on stdout.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
)

// commandArgs are each command's required arguments, the first line of its
// usage (a test checks that every command has one).
var commandArgs = map[string]string{
	"calibrate": "--human FILE --judge FILE --lock FILE [flags]   (or --human-sheet FILE --judge-qrels FILE)",
	"check":     "--cases FILE --kb PATH [flags]",
	"compare":   "--qrels FILE --run NAME=FILE --run NAME=FILE [flags]",
	"evaluate":  "--kb PATH --out DIR --judge-url URL [flags]",
	"generate":  "--kb PATH --out FILE --generator-url URL [flags]",
	"import":    "--in FILE --out FILE [flags]",
	"judge":     "--kb PATH --run NAME=FILE --judge-url URL --qrels FILE [flags]",
	"report":    "--history DIR --html FILE [flags]   (or --from FILE.json)",
	"retrieve":  "--kb PATH --cases FILE --out FILE [flags]",
}

// shortUsage is the two lines printed under a usage error of command name.
func shortUsage(name string) string {
	return fmt.Sprintf("usage: retrieval-gate %s %s\n       'retrieval-gate %s --help' lists every flag\n", name, commandArgs[name], name)
}

// synopsis is the one-line description of command name.
func synopsis(name string) string {
	for _, c := range commands(nil) {
		if c.Name == name {
			return c.Synopsis
		}
	}
	return ""
}

// writeHelp writes the whole help of fs's command: usage, synopsis and every
// flag with its double dash, what it takes and its default.
func writeHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: retrieval-gate %s %s\n\n%s\n\nflags:\n", fs.Name(), commandArgs[fs.Name()], synopsis(fs.Name()))
	fs.VisitAll(func(fl *flag.Flag) {
		arg, usage := flagArg(fl)
		fmt.Fprintf(w, "  --%s", fl.Name)
		if arg != "" {
			fmt.Fprintf(w, " %s", arg)
		}
		fmt.Fprintf(w, "\n    \t%s", strings.ReplaceAll(usage, "\n", "\n    \t"))
		if !isZeroValue(fl) {
			if g, ok := fl.Value.(flag.Getter); ok {
				if _, text := g.Get().(string); text {
					fmt.Fprintf(w, " (default %q)", fl.DefValue)
					fmt.Fprintln(w)
					return
				}
			}
			fmt.Fprintf(w, " (default %v)", fl.DefValue)
		}
		fmt.Fprintln(w)
	})
	fmt.Fprintf(w, "\nA flag is written --name VALUE or --name=VALUE. Exit codes: 0 every active gate passed, 1 a gate failed, 2 a usage or input error.\n")
}

// flagArg is the name of fl's value in its help (the `NAME` its usage quotes,
// else its kind: N, X, TEXT, DURATION, VALUE; none for a boolean) and its usage.
func flagArg(fl *flag.Flag) (arg, usage string) {
	arg, usage = flag.UnquoteUsage(fl)
	switch arg {
	case "int", "uint":
		arg = "N"
	case "float":
		arg = "X"
	case "string":
		arg = "TEXT"
	case "duration":
		arg = "DURATION"
	case "value":
		arg = "VALUE"
	}
	return arg, usage
}

// isZeroValue reports whether fl's default is its kind's zero value (not
// printed), as flag.PrintDefaults decides.
func isZeroValue(fl *flag.Flag) (zero bool) {
	typ := reflect.TypeOf(fl.Value)
	var z reflect.Value
	if typ.Kind() == reflect.Pointer {
		z = reflect.New(typ.Elem())
	} else {
		z = reflect.Zero(typ)
	}
	defer func() {
		if recover() != nil { // a String method that cannot take the zero value
			zero = fl.DefValue == ""
		}
	}()
	return fl.DefValue == z.Interface().(flag.Value).String()
}

// The flag package's parse errors (Go's flag.go, FlagSet.parseOne).
var (
	unknownFlag  = regexp.MustCompile(`^flag provided but not defined: -(.*)$`)
	invalidValue = regexp.MustCompile(`^invalid value "((?:[^"\\]|\\.)*)" for flag -(\S+): (?s:(.*))$`)
	invalidBool  = regexp.MustCompile(`^invalid boolean value "((?:[^"\\]|\\.)*)" for -(\S+): (?s:(.*))$`)
	needsValue   = regexp.MustCompile(`^flag needs an argument: -(\S+)$`)
)

// flagError rewrites err, an error of fs.Parse, as the usage error of fs's
// command: the flag written --name, the nearest flag for an unknown one, what a
// flag wants for a value it refused, and the command's short usage.
func flagError(fs *flag.FlagSet, err error) error {
	cmd, msg := fs.Name(), err.Error()
	out := &UsageError{Msg: cmd + ": " + msg, Usage: shortUsage(cmd)}
	switch {
	case unknownFlag.MatchString(msg):
		name := unknownFlag.FindStringSubmatch(msg)[1]
		out.Msg = fmt.Sprintf("%s: unknown flag --%s", cmd, format.Clean(name))
		if near := nearestFlag(fs, name); near != "" {
			out.Msg += fmt.Sprintf("; did you mean --%s?", near)
		}
	case invalidValue.MatchString(msg):
		m := invalidValue.FindStringSubmatch(msg)
		out.Msg = valueMessage(fs, m[2], unquote(m[1]), m[3])
	case invalidBool.MatchString(msg):
		m := invalidBool.FindStringSubmatch(msg)
		out.Msg = fmt.Sprintf("%s: --%s takes no value, or =true or =false: %q is not a boolean", cmd, m[2], format.Clean(unquote(m[1])))
	case needsValue.MatchString(msg):
		name := needsValue.FindStringSubmatch(msg)[1]
		out.Msg = fmt.Sprintf("%s: --%s needs a value%s", cmd, name, wants(fs.Lookup(name)))
	}
	return out
}

func unquote(s string) string {
	var v string
	if _, err := fmt.Sscanf(`"`+s+`"`, "%q", &v); err != nil {
		return s
	}
	return v
}

// valueMessage is the refusal of value for flag name, whose Set said why (the
// flag package's "parse error" and "value out of range" for its own kinds):
//
//	check: --k "five" is not an integer (--k N: the retrieval top-k (≥ 1); …)
func valueMessage(fs *flag.FlagSet, name, value, why string) string {
	fl := fs.Lookup(name)
	phrase := why
	if fl != nil {
		switch why {
		case "parse error", "value out of range":
			phrase = kindPhrase(fl, why == "value out of range")
		}
	}
	if !strings.HasPrefix(phrase, "is ") { // the flag's own refusal, which quotes the value
		return fmt.Sprintf("%s: --%s: %s", fs.Name(), name, phrase)
	}
	return fmt.Sprintf("%s: --%s %q %s%s", fs.Name(), name, format.Clean(value), phrase, wants(fl))
}

// kindPhrase says what kind of value fl takes, for a value that is not one.
func kindPhrase(fl *flag.Flag, outOfRange bool) string {
	var g any
	if getter, ok := fl.Value.(flag.Getter); ok {
		g = getter.Get()
	}
	if outOfRange {
		return "is out of range"
	}
	switch g.(type) {
	case int, int64:
		return "is not an integer"
	case uint, uint64:
		return "is not a non-negative integer"
	case float64:
		return "is not a number"
	case interface{ Seconds() float64 }:
		return "is not a duration (such as 30s, 5m or 1h)"
	}
	return "is not a valid value"
}

// wants is " (--NAME ARG: usage)", what flag fl takes, for a message.
func wants(fl *flag.Flag) string {
	if fl == nil {
		return ""
	}
	arg, usage := flagArg(fl)
	head := "--" + fl.Name
	if arg != "" {
		head += " " + arg
	}
	if usage == "" {
		return ""
	}
	return " (" + head + ": " + usage + ")"
}

// nearestFlag is the flag of fs closest to the unknown name: within two edits
// (one for names of up to 4 letters), or one that it begins or ends; ties go to
// the shorter name, then the first in order. "" when none is close.
func nearestFlag(fs *flag.FlagSet, name string) string {
	name = strings.ToLower(strings.TrimLeft(name, "-"))
	name, _, _ = strings.Cut(name, "=")
	type cand struct {
		name string
		d    int
	}
	var cands []cand
	limit := 2
	if len(name) <= 4 {
		limit = 1
	}
	fs.VisitAll(func(fl *flag.Flag) {
		d := editDistance(name, fl.Name)
		switch {
		case d <= limit:
		case len(name) >= 3 && (strings.HasPrefix(fl.Name, name) || strings.HasPrefix(name, fl.Name)),
			strings.HasSuffix(name, "-"+fl.Name) || strings.HasPrefix(name, fl.Name+"-"):
			d = limit + 1 + abs(len(fl.Name)-len(name))
		default:
			return
		}
		cands = append(cands, cand{fl.Name, d})
	})
	if len(cands) == 0 {
		return ""
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].d != cands[j].d {
			return cands[i].d < cands[j].d
		}
		return len(cands[i].name) < len(cands[j].name)
	})
	return cands[0].name
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// editDistance is the Levenshtein distance of a and b, adjacent transpositions
// counted as one edit (optimal string alignment).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// withUsage gives err, a usage error of command name's parse, the command's
// short usage (a flag's error already has it).
func withUsage(name string, err error) error {
	var ue *UsageError
	if errors.As(err, &ue) && ue.Usage == "" {
		ue.Usage = shortUsage(name)
	}
	return err
}

// Package report reads a saved --json report of `retrieval-gate check`,
// `compare` or `calibrate` and renders it again as text, Markdown or HTML, as
// `retrieval-gate report --from FILE` does (the command calls it). A Document
// renders with the methods of gate.Report: WriteJSON, WriteText,
// WriteTextVerbose, WriteMarkdown and WriteHTML. It reads no environment and
// publishes nothing.
// Its compatibility promise is package gate's.
package report

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/guard"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
	"github.com/retrieval-gate/retrieval-gate/internal/report/calibratereport"
	"github.com/retrieval-gate/retrieval-gate/internal/report/checkreport"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
	htmlreport "github.com/retrieval-gate/retrieval-gate/internal/report/html"
	"github.com/retrieval-gate/retrieval-gate/internal/report/readback"
)

// ErrNoHTML is HTML's error for a document that has no HTML rendering.
var ErrNoHTML = errors.New("no HTML report")

// ErrNoMarker is WriteMarkdown's error for a CommentKey set on a document
// whose Markdown has no comment marker to carry it (compare's).
var ErrNoMarker = errors.New("no comment marker")

// Document is a --json report read back. CommentKey is the key the
// Markdown's comment marker carries ("" the command's default key: "default"
// for check, "calibrate" for calibrate). A compare document's Markdown has no
// marker, as compare's --markdown file has none (the marker of compare's PR
// comment is added when it is published, with compare --comment-key's key),
// so a CommentKey set on it is refused by WriteMarkdown (ErrNoMarker), as
// `report --from --comment-key` refuses it, rather than ignored.
//
// A Document is made by Read. The zero Document (and a nil *Document) holds
// no report: Command is "" and each Write method returns an error, writing
// nothing.
type Document struct {
	CommentKey string

	command  string
	json     func(io.Writer) error
	text     func(io.Writer) error
	verbose  func(io.Writer) error
	markdown func(w io.Writer, key string) error
	html     func(io.Writer) error
	noHTML   string
	noMarker string // why the Markdown has no comment marker ("": it has one)
}

// defaultKey is a command's default comment key (publish.DefaultKey for check).
func defaultKey(command string) string {
	if command == "check" {
		return "default"
	}
	return command
}

// noHTML is HTML's error for a document without an HTML page.
type noHTML struct{ command, why string }

func (e *noHTML) Error() string {
	return fmt.Sprintf("a %s document cannot be rendered as HTML: %s", e.command, e.why)
}

func (e *noHTML) Is(target error) bool { return target == ErrNoHTML }

// noMarker is WriteMarkdown's error for a key given to a document whose
// Markdown has no comment marker.
type noMarker struct{ command, why string }

func (e *noMarker) Error() string {
	return fmt.Sprintf("a %s document's Markdown has no comment marker to carry a key: %s", e.command, e.why)
}

func (e *noMarker) Is(target error) bool { return target == ErrNoMarker }

// Read reads a --json report of check, compare or calibrate from r, recognised
// by its schema; name is the file's name in messages. A malformed document is
// an error naming name:line; a nil r is an error; when ctx ends, Read returns
// ctx's error promptly, also while r blocks in a read (a pipe, a socket). The
// error's text is guarded as package gate's errors are: data it quotes cannot
// forge a workflow command in a CI log.
func Read(ctx context.Context, r io.Reader, name string) (*Document, error) {
	d, err := read(ctx, r, name)
	return d, guard.Error(err)
}

// read is Read but for the guard on its error's text.
func read(ctx context.Context, r io.Reader, name string) (*Document, error) {
	if input.IsNil(r) {
		return nil, errors.New("report: no reader (nil)")
	}
	// The same read and parse as every document reader's (readback.Parse: the
	// size cap, the BOM, the values cap, errors at their lines).
	data, root, err := readback.Parse(input.Reader(ctx, r), name)
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	schema := root.Get("schema")
	if schema == nil {
		return nil, input.Errorf(name, root.Line, "no \"schema\": not a --json report of check, compare or calibrate")
	}
	if schema.Kind != jsonpos.String {
		return nil, input.Errorf(name, schema.Line, "\"schema\" is %s, not a string", schema.TypeName())
	}
	wrap := func(err error) error {
		if ie := (*input.Error)(nil); errors.As(err, &ie) {
			return input.Errorf(name, ie.Line, "%s", ie.Msg) // the value at its line (the document readers' checks)
		}
		return input.Errorf(name, 0, "%v", err)
	}
	// The renderer's checks and decoding on the tree parsed here (ReadParsed):
	// the document parsed once.
	switch schema.Str {
	case checkreport.Schema:
		d, err := checkreport.ReadParsed(data, root)
		if err != nil {
			return nil, wrap(err)
		}
		return &Document{command: "check", json: d.WriteJSON, text: d.Text, verbose: d.TextVerbose,
			markdown: func(w io.Writer, key string) error {
				_, err := io.WriteString(w, d.Markdown(checkreport.MarkdownOptions{Marker: format.CommentMarker(key)}))
				return err
			},
			html: func(w io.Writer) error { return htmlreport.CheckHTML(w, d) }}, nil
	case comparereport.Schema:
		d, err := comparereport.ReadParsed(data, root)
		if err != nil {
			return nil, wrap(err)
		}
		return &Document{command: "compare", json: d.WriteJSON, text: d.Text,
			markdown: func(w io.Writer, _ string) error { return d.Markdown(w) },
			html:     func(w io.Writer) error { return htmlreport.CompareHTML(w, d, nil, nil) },
			noMarker: "compare's --markdown writes none (the key of compare's PR comment is compare --comment-key)"}, nil
	case calibratereport.Schema:
		d, err := calibratereport.ReadParsed(data, root)
		if err != nil {
			return nil, wrap(err)
		}
		return &Document{command: "calibrate", json: d.WriteJSON, text: d.Text, markdown: func(w io.Writer, key string) error { return d.Markdown(w, format.CommentMarker(key)) },
			noHTML: "calibrate has no HTML report"}, nil
	}
	return nil, input.Errorf(name, schema.Line, "unknown schema %s: report --from reads the --json report of check (%s), compare (%s) or calibrate (%s)",
		jsonpos.QuoteKey([]byte(schema.Str)), checkreport.Schema, comparereport.Schema, calibratereport.Schema)
}

// errZeroDocument is the error of a zero Document's Write methods.
var errZeroDocument = errors.New("report: a zero Document holds no report: report.Read returns the Document of one")

// zero reports whether d holds no report (the zero Document, or nil).
func (d *Document) zero() bool { return d == nil || d.command == "" }

// Command is the command that wrote the document: check, compare or
// calibrate ("" for a zero Document).
func (d *Document) Command() string {
	if d.zero() {
		return ""
	}
	return d.command
}

// WriteJSON writes the document as the command's --json wrote it.
func (d *Document) WriteJSON(w io.Writer) error {
	if d.zero() {
		return errZeroDocument
	}
	return d.json(w)
}

// WriteText writes the terminal report, as the command printed it: through
// the guard the command's standard output has, so text of
// the document (a locale, a group, a reason) that holds a workflow command ("::"
// at a line start, "##[" anywhere) cannot forge one in the CI log the report is
// printed to ("##[add-mask]" is written "##\[add-mask]").
func (d *Document) WriteText(w io.Writer) error {
	if d.zero() {
		return errZeroDocument
	}
	return guard.Write(w, d.text)
}

// WriteTextVerbose writes the whole terminal report of a check document, as
// `report --from FILE --verbose` prints it: check --verbose's report of what
// the JSON carries (the missed cases are not in it; a line says so). The
// terminal report of compare and calibrate has no shorter form, so for their
// documents it writes what WriteText writes (the command refuses --verbose
// for them). It is guarded as WriteText is.
func (d *Document) WriteTextVerbose(w io.Writer) error {
	if d.zero() {
		return errZeroDocument
	}
	if d.verbose == nil {
		return d.WriteText(w)
	}
	return guard.Write(w, d.verbose)
}

// WriteMarkdown writes the Markdown report (the PR comment body), as
// `report --from FILE --markdown` does: for check and calibrate its marker
// carries CommentKey; compare's has no marker, and with a CommentKey set it
// is an error that says why (errors.Is ErrNoMarker), writing nothing.
func (d *Document) WriteMarkdown(w io.Writer) error {
	if d.zero() {
		return errZeroDocument
	}
	if d.CommentKey != "" && d.noMarker != "" {
		return &noMarker{d.command, d.noMarker}
	}
	key := d.CommentKey
	if key == "" {
		key = defaultKey(d.command)
	}
	return d.markdown(w, key)
}

// WriteHTML writes the self-contained HTML page: check's report or compare's
// dashboard (of a document read back: without the diagnosis and the reranker
// tests, which the JSON does not carry). A calibrate document has none: an
// error that says why (errors.Is ErrNoHTML), writing nothing.
func (d *Document) WriteHTML(w io.Writer) error {
	if d.zero() {
		return errZeroDocument
	}
	if d.html == nil {
		return &noHTML{d.command, d.noHTML}
	}
	return d.html(w)
}

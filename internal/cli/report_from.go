package cli

// report --from: a saved --json document of check, compare or calibrate,
// rendered again (text on stdout, --markdown, --html).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
	"github.com/retrieval-gate/retrieval-gate/internal/report/calibratereport"
	"github.com/retrieval-gate/retrieval-gate/internal/report/checkreport"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
	htmlreport "github.com/retrieval-gate/retrieval-gate/internal/report/html"
)

// maxFromSize caps the document report --from reads (a --json report is far
// smaller: its groups and strategies are capped).
const maxFromSize = 64 << 20

// fromOptions are report's flags in --from mode.
type fromOptions struct {
	from, markdownOut, htmlOut, commentKey string
	src                                    *sources
}

// rendered is a document read back: its renderers (html nil when the document
// cannot be rendered as HTML, with noHTML saying why).
type rendered struct {
	command  string
	text     func(io.Writer) error
	markdown func(w io.Writer, key string) error
	html     func(io.Writer) error
	noHTML   string
}

// readDocument reads a --json document of check, compare or calibrate,
// recognised by its schema. A malformed file is reported at its line.
func readDocument(ctx context.Context, path string) (*rendered, error) {
	f, err := input.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("failed to read the document: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(input.Reader(ctx, f), maxFromSize+1))
	if err != nil {
		return nil, fmt.Errorf("failed to read the document: %w", err)
	}
	if len(data) > maxFromSize {
		return nil, input.Errorf(path, 0, "larger than %d MiB: not a --json report", maxFromSize>>20)
	}
	var p jsonpos.Parser
	root, err := p.Parse(data, 1, 0)
	if err != nil {
		var se *jsonpos.SyntaxError
		if errors.As(err, &se) {
			line, msg := se.DescribeAt(data)
			return nil, input.Errorf(path, line, "%s", msg)
		}
		return nil, input.Errorf(path, 0, "%v", err)
	}
	if root.Kind != jsonpos.Object {
		return nil, input.Errorf(path, root.Line, "the document is %s, not an object", root.TypeName())
	}
	schema := root.Get("schema")
	if schema == nil {
		return nil, input.Errorf(path, root.Line, "no \"schema\": not a --json report of check, compare or calibrate")
	}
	if schema.Kind != jsonpos.String {
		return nil, input.Errorf(path, schema.Line, "\"schema\" is %s, not a string", schema.TypeName())
	}
	wrap := func(err error) error { return input.Errorf(path, 0, "%v", err) }
	r := bytes.NewReader(data)
	switch schema.Str {
	case checkreport.Schema:
		d, err := checkreport.Read(r)
		if err != nil {
			return nil, wrap(err)
		}
		return &rendered{command: "check", text: d.Text,
			markdown: func(w io.Writer, key string) error {
				_, err := io.WriteString(w, d.Markdown(checkreport.MarkdownOptions{Marker: commentMarker(key)}))
				return err
			},
			html: func(w io.Writer) error { return htmlreport.CheckHTML(w, d) }}, nil
	case comparereport.Schema:
		d, err := comparereport.Read(r)
		if err != nil {
			return nil, wrap(err)
		}
		return &rendered{command: "compare", text: d.Text,
			markdown: func(w io.Writer, _ string) error { return d.Markdown(w) },
			noHTML:   "the compare dashboard needs the per-query values (best and worst queries), which the JSON document does not carry; write it with compare --html"}, nil
	case calibratereport.Schema:
		d, err := calibratereport.Read(r)
		if err != nil {
			return nil, wrap(err)
		}
		return &rendered{command: "calibrate", text: d.Text,
			markdown: func(w io.Writer, key string) error { return d.Markdown(w, commentMarker(key)) },
			noHTML:   "calibrate has no HTML report"}, nil
	}
	return nil, input.Errorf(path, schema.Line, "unknown schema %s: report --from reads the --json report of check (%s), compare (%s) or calibrate (%s)",
		jsonpos.QuoteKey([]byte(schema.Str)), checkreport.Schema, comparereport.Schema, calibratereport.Schema)
}

// runFrom renders the document of o.from: the text report on stdout, and the
// Markdown and HTML files asked for (all or none). The document's verdict does
// not set the exit code: this re-renders a report, it gates nothing.
func runFrom(ctx context.Context, env *Env, o fromOptions) error {
	if o.commentKey != "" && !publish.ValidKey(o.commentKey) {
		return o.src.refuse("report", "comment-key", "must be 1 to 100 characters of A-Z a-z 0-9 . _ / -")
	}
	if err := refuseOverwrite("report", o.src, []file{{"from", o.from}}, []file{{"markdown", o.markdownOut}, {"html", o.htmlOut}}); err != nil {
		return err
	}
	outs := atomicfile.NewSet()
	defer outs.Abort()
	ws, err := addOutputs(outs, o.markdownOut, o.htmlOut)
	if err != nil {
		return err
	}
	doc, err := readDocument(ctx, o.from)
	if err != nil {
		return err
	}
	if ws[1] != nil && doc.html == nil {
		return usagef("report: %s: a %s document cannot be rendered as HTML: %s", o.src.name("html"), doc.command, doc.noHTML)
	}
	key := o.commentKey
	if key == "" {
		key = commentKeys[doc.command]
	}
	if err := render(ws, func(w io.Writer) error { return doc.markdown(w, key) }, doc.html); err != nil {
		return err
	}
	if err := outs.Commit(); err != nil {
		return err
	}
	return doc.text(env.Stdout)
}

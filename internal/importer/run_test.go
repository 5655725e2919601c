package importer

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Run converts a file or standard input, detects or takes the format, writes the
// output whole or not at all, and names the detected format when the input is bad.
func TestRun(t *testing.T) {
	const qrels = "q1 0 d1 1\nq1 0 d2 2\n"
	trec, ok := Lookup("trec-qrels")
	require.True(t, ok)
	for _, tt := range []struct {
		name    string
		in, out string // "-": standard input / output; "" a file in the test's directory
		content string
		format  *Format
		given   bool
		wantErr string
		records int
	}{
		{name: "file to file, detected", content: qrels, records: 2},
		{name: "stdin to stdout, given", in: "-", out: "-", content: qrels, format: trec, given: true, records: 2},
		{name: "bad line names the detected format", content: "q1 0 d1 1\nq1 0 d2\n",
			wantErr: `want 4 fields "qid iter docid rel", got 3 (detected format trec-qrels; pass --format to choose another)`},
		{name: "given format: no hint", content: "q1 0 d1 1\nq1 0 d2\n", format: trec, wantErr: `got 3`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			in := In{Path: tt.in, Out: tt.out, Stdin: strings.NewReader(tt.content)}
			var stdout bytes.Buffer
			in.Stdout = &stdout
			if in.Path == "" {
				in.Path = filepath.Join(dir, "in.txt")
				require.NoError(t, os.WriteFile(in.Path, []byte(tt.content), 0o644))
			}
			if in.Out == "" {
				in.Out = filepath.Join(dir, "out.txt")
			}
			res, err := Run(context.Background(), in, RunOptions{Format: tt.format})
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				if tt.format != nil {
					assert.NotContains(t, err.Error(), "detected format")
				}
				assert.NoFileExists(t, in.Out, "nothing written")
				assert.Empty(t, stdout.String())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "trec-qrels", res.Format.Name)
			assert.Equal(t, tt.given, res.Given)
			assert.Equal(t, tt.records, res.Stats.Records)
			got := stdout.Bytes()
			if tt.out != "-" {
				assert.Equal(t, in.Path, res.Name)
				got, err = os.ReadFile(in.Out)
				require.NoError(t, err)
			} else {
				assert.Equal(t, "<stdin>", res.Name)
			}
			assert.Equal(t, qrels, string(got))
		})
	}
}

// An unwritable output fails before the input is read.
func TestRunUnwritableOutputFirst(t *testing.T) {
	r := &readCounter{}
	notDir := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o644))
	_, err := Run(context.Background(), In{Path: "-", Out: filepath.Join(notDir, "out.txt"), Stdin: r}, RunOptions{})
	require.Error(t, err)
	assert.Zero(t, r.reads)
}

type readCounter struct{ reads int }

func (r *readCounter) Read([]byte) (int, error) { r.reads++; return 0, nil }

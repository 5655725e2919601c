package gate_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite api/*.txt from go doc -all")

// publicPackages are the packages of the compatibility promise, whose API
// snapshot is in api/ (scripts/api-check).
var publicPackages = []string{"gate", "report"}

// TestAPISnapshot: api/PKG.txt is `go doc -all` of each public package, byte
// for byte (a golden file: -update rewrites it), so every change of the API or
// of its documentation shows in review; and no file of the snapshot names a
// path of the machine that wrote it (api/PKG.export's positions are relative
// to the module: scripts/api-check writes it with -trimpath). The
// compatibility of the API with api/PKG.export is scripts/api-check's, run
// here when RETRIEVAL_GATE_HEAVY_TESTS=1 (it builds apidiff), and by CI.
func TestAPISnapshot(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	for _, p := range publicPackages {
		t.Run(p, func(t *testing.T) {
			cmd := exec.Command(goCmd, "doc", "-all", "./"+p)
			cmd.Dir = root
			var errb bytes.Buffer
			cmd.Stderr = &errb
			got, err := cmd.Output()
			require.NoError(t, err, errb.String())
			path := filepath.Join(root, "api", p+".txt")
			if *update {
				require.NoError(t, os.WriteFile(path, got, 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got), "api/%s.txt is not go doc -all ./%s: rewrite it with go test ./gate -run TestAPISnapshot -update (an incompatible change also needs scripts/api-check -w, docs/library.md)", p, p)

			assert.NotContains(t, string(want), root, "api/%s.txt names this checkout", p)
			export, err := os.ReadFile(filepath.Join(root, "api", p+".export"))
			require.NoError(t, err)
			strs, err := exportStrings(export)
			require.NoError(t, err, "api/%s.export", p)
			var abs []string
			for _, s := range strs {
				if isAbsolute(s) {
					abs = append(abs, s)
				}
			}
			assert.Empty(t, abs, "api/%s.export names paths of the machine that wrote it: write it with scripts/api-check -w, which uses -trimpath", p)
			assert.Contains(t, strs, "github.com/retrieval-gate/retrieval-gate/"+p+"/"+p+".go", "the file names are in the strings read")
		})
	}
	t.Run("compatible", func(t *testing.T) {
		if testing.Short() || os.Getenv("RETRIEVAL_GATE_HEAVY_TESTS") != "1" {
			t.Skip("builds apidiff: set RETRIEVAL_GATE_HEAVY_TESTS=1 to run it (.ci/run does)")
		}
		cmd := exec.Command("bash", "scripts/api-check")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "scripts/api-check:\n%s", out)
	})
}

// exportStrings are the strings of apidiff's export data (the package's path
// and a newline, then gcexportdata.Write's "i" and the indexed format's header,
// uvarints version, strings length and data length, then the strings section,
// each string its uvarint length and bytes): every name in it, the files'
// names included.
func exportStrings(b []byte) ([]string, error) {
	_, b, ok := bytes.Cut(b, []byte("\n"))
	if !ok || len(b) == 0 || b[0] != 'i' {
		return nil, errors.New("not indexed export data (no leading 'i')")
	}
	b = b[1:]
	var header [3]uint64 // version, strings length, data length
	for i := range header {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, errors.New("truncated header")
		}
		header[i], b = v, b[n:]
	}
	if header[1] > uint64(len(b)) {
		return nil, fmt.Errorf("strings section of %d bytes in %d", header[1], len(b))
	}
	var out []string
	for sec := b[:header[1]]; len(sec) > 0; {
		l, n := binary.Uvarint(sec)
		if n <= 0 || uint64(len(sec)-n) < l {
			return nil, errors.New("malformed strings section")
		}
		out = append(out, string(sec[n:n+int(l)]))
		sec = sec[n+int(l):]
	}
	return out, nil
}

// isAbsolute: a path from a file system's root ("/…", "C:/…", "C:\\…"), not
// one relative to the module or the Go root ("github.com/…", "$GOROOT/src/…").
func isAbsolute(p string) bool {
	return strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || (len(p) > 2 && p[1] == ':' && (p[2] == '/' || p[2] == '\\'))
}

func TestExportStrings(t *testing.T) {
	str := func(s string) []byte { return append(binary.AppendUvarint(nil, uint64(len(s))), s...) }
	strs := bytes.Join([][]byte{str("github.com/x/gate/gate.go"), str("/work/x/gate/live.go"), str("Report")}, nil)
	data := append(append([]byte("github.com/x/gate\ni\x02"), binary.AppendUvarint(nil, uint64(len(strs)))...), 3)
	data = append(append(data, strs...), 1, 2, 3)
	got, err := exportStrings(data)
	require.NoError(t, err)
	assert.Equal(t, []string{"github.com/x/gate/gate.go", "/work/x/gate/live.go", "Report"}, got)
	assert.Equal(t, []bool{false, true, false}, []bool{isAbsolute(got[0]), isAbsolute(got[1]), isAbsolute(got[2])})
	assert.True(t, isAbsolute(`C:\src\gate.go`))
	assert.False(t, isAbsolute("$GOROOT/src/io/io.go"))
	_, err = exportStrings([]byte("github.com/x/gate\nu\x00"))
	require.Error(t, err)
}

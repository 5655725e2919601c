package input_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/importer"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/jsonobj"
	"github.com/retrieval-gate/retrieval-gate/report"
)

// hostileDir is the corpus of hostile inputs: testdata/hostile/<family>/<name>.<ext>,
// each listed in its README.md with the expected outcome.
var hostileDir = filepath.Join("..", "..", "testdata", "hostile")

// errNotApplicable is what a reader returns for a file it does not read.
var errNotApplicable = errors.New("not applicable")

// reader runs one reader over a file; ctx bounds it.
type reader struct {
	name string
	run  func(ctx context.Context, path string) error
}

// viaShards reads a file as the commands read a Parquet file (or a shard):
// through input.OpenSharded, its rows as lines, an error remapped to the file
// and its row.
func viaShards(ctx context.Context, p string, read func(r io.Reader) error) error {
	s, err := input.OpenSharded(ctx, p)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Remap(read(s))
}

// openFile opens p for a reader of r: a Parquet file through viaShards, any
// other as it is.
func openFile(ctx context.Context, p string, read func(r io.Reader) error) error {
	if input.IsParquet(p) {
		return viaShards(ctx, p, read)
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return read(f)
}

func readersOf(family, ext string) []reader {
	switch family {
	case "cases":
		return []reader{
			{"StreamCases", func(ctx context.Context, p string) error {
				return openFile(ctx, p, func(f io.Reader) error {
					return casefile.StreamCases(ctx, f, p, func(c *casefile.Case) error {
						// retrieve rewrites every case line it reads.
						_, err := jsonobj.Set(c.Raw, []jsonobj.Member{{Key: "retrieved", Value: []byte(`[]`)}, {Key: "retrieval", Value: []byte(`{}`)}})
						if err != nil {
							return fmt.Errorf("jsonobj.Set refused a line the case reader accepted: %w", err)
						}
						return nil
					})
				})
			}},
			{"MapCases", func(ctx context.Context, p string) error {
				// A Parquet file's rows are read as cases (MapCasesWith's Parquet path).
				return openFile(ctx, p, func(f io.Reader) error {
					return casefile.MapCases(ctx, f, p, 2, func(*casefile.Case) (int, error) { return 0, nil }, func(int) error { return nil })
				})
			}},
		}
	case "kb":
		return []reader{{"kbfile.Load", func(ctx context.Context, p string) error {
			_, err := kbfile.Load(ctx, p)
			return err
		}}}
	case "qrels":
		return []reader{{"ReadQrels", func(ctx context.Context, p string) error {
			if input.IsParquet(p) {
				return viaShards(ctx, p, func(r io.Reader) error { _, err := trecfile.ParseQrels(ctx, r, p); return err })
			}
			_, err := inputtest.ReadQrels(ctx, p)
			return err
		}}}
	case "run":
		return []reader{
			{"ReadRun", func(ctx context.Context, p string) error {
				if input.IsParquet(p) {
					return viaShards(ctx, p, func(r io.Reader) error {
						_, err := trecfile.ReadRunFrom(ctx, r, p, 5, trecfile.RunOptions{})
						return err
					})
				}
				_, err := inputtest.ReadRun(ctx, p, 5, trecfile.RunOptions{})
				return err
			}},
			{"ParseTRECRun", func(ctx context.Context, p string) error {
				if ext == ".jsonl" {
					return errNotApplicable // a cases-format run: ReadRun reads it
				}
				return openFile(ctx, p, func(f io.Reader) error { _, err := trecfile.ParseTRECRun(ctx, f, p, 5); return err })
			}},
		}
	case "labels":
		var rs []reader
		for _, side := range []labelfile.LabelSide{labelfile.HumanSide, labelfile.JudgeSide} {
			rs = append(rs, reader{"ReadLabels/" + side.String(), func(ctx context.Context, p string) error {
				if side == labelfile.JudgeSide && strings.HasPrefix(filepath.Base(p), "human-") {
					return errNotApplicable // human fields (a rater id): a judge score refuses them as such
				}
				_, err := inputtest.ReadLabelsFile(ctx, p, side, nil)
				return err
			}})
		}
		return rs
	case "lock":
		return []reader{{"ReadLock", func(ctx context.Context, p string) error {
			_, err := labelfile.ReadLockFile(ctx, p)
			return err
		}}}
	case "history":
		return []reader{{"history.Scan", func(_ context.Context, p string) error {
			return history.Scan(context.Background(), p, func(history.Record, *fastjson.Value) error { return nil })
		}}}
	case "cache":
		return []reader{{"judge.OpenCache", func(_ context.Context, p string) error {
			c, err := judge.OpenCacheContext(context.Background(), p) // writes nothing (the hostile test's files stay as they are)
			if err != nil {
				return err
			}
			return c.Close()
		}}}
	case "clusters":
		return []reader{{"compare.ReadClusters", func(ctx context.Context, p string) error {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = compare.ReadClusters(ctx, f, p)
			return err
		}}}
	case "sheet":
		return []reader{{"ReadSheet", func(ctx context.Context, p string) error {
			_, err := inputtest.ReadSheetFile(ctx, p)
			return err
		}}}
	case "import":
		return []reader{{"importer.Convert", func(ctx context.Context, p string) error {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			_, _, err = importer.Convert(ctx, f, p, io.Discard, nil, importer.Options{LineAt: importer.LineAt(f)})
			return err
		}}}
	case "from":
		return []reader{{"report.Read", func(ctx context.Context, p string) error {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = report.Read(ctx, f, p)
			return err
		}}}
	case "queries":
		return []reader{
			{"judge.ReadQueries", func(ctx context.Context, p string) error {
				return openFile(ctx, p, func(r io.Reader) error { _, err := judge.ReadQueries(ctx, r, p); return err })
			}},
			{"compare.ReadQueries", func(ctx context.Context, p string) error {
				return openFile(ctx, p, func(r io.Reader) error { _, err := compare.ReadQueries(ctx, r, p); return err })
			}},
		}
	case "prompt":
		return []reader{
			{"judge.ParsePrompt", func(_ context.Context, p string) error {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				_, err = judge.ParsePrompt(p, b)
				return err
			}},
			{"generate.ParsePrompt", func(_ context.Context, p string) error {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				_, err = generate.ParsePrompt(p, b)
				return err
			}},
		}
	case "baseline":
		return []reader{{"baseline.Load", func(ctx context.Context, p string) error {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			b, err := baseline.Load(ctx, f, p, os.TempDir())
			if err != nil {
				return err
			}
			return b.Close()
		}}}
	}
	return nil
}

// expectation is a README row: "accepted", or an error containing want.
type expectation struct {
	accepted bool
	want     string
}

var rowRE = regexp.MustCompile("^\\| `([a-z]+/[^`]+)` \\|[^|]*\\| (.*) \\|$")

func readExpectations(t *testing.T) map[string]expectation {
	t.Helper()
	f, err := os.Open(filepath.Join(hostileDir, "README.md"))
	require.NoError(t, err)
	defer f.Close()
	out := map[string]expectation{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := rowRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		e := expectation{accepted: strings.HasPrefix(m[2], "accepted")}
		if !e.accepted {
			w := regexp.MustCompile("`([^`]+)`").FindStringSubmatch(m[2])
			require.NotNil(t, w, "README row for %s gives no `error text`", m[1])
			e.want = w[1]
		}
		out[m[1]] = e
	}
	require.NoError(t, sc.Err())
	return out
}

// TestHostileCorpus runs every file of testdata/hostile through every reader of
// its family: no panic, no hang (a reader gets 10 s), the outcome the README
// states, and an error is an *input.Error naming the file (and a line when the
// README's text names one) in a short, single-line message.
func TestHostileCorpus(t *testing.T) {
	want := readExpectations(t)
	var files []string
	require.NoError(t, filepath.WalkDir(hostileDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "README.md" {
			return err
		}
		rel, _ := filepath.Rel(hostileDir, p)
		files = append(files, filepath.ToSlash(rel))
		return nil
	}))
	sort.Strings(files)
	require.NotEmpty(t, files)
	for _, rel := range files {
		exp, ok := want[rel]
		require.True(t, ok, "%s is not listed in testdata/hostile/README.md", rel)
		family := strings.SplitN(rel, "/", 2)[0]
		rs := readersOf(family, filepath.Ext(rel))
		require.NotEmpty(t, rs, "no reader for family %q", family)
		path := filepath.Join(hostileDir, filepath.FromSlash(rel))
		for _, r := range rs {
			t.Run(rel+"/"+r.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				done := make(chan error, 1)
				go func() {
					defer func() {
						if p := recover(); p != nil {
							done <- fmt.Errorf("panic: %v", p)
						}
					}()
					done <- r.run(ctx, path)
				}()
				var err error
				select {
				case err = <-done:
				case <-time.After(15 * time.Second):
					t.Fatalf("%s hangs on %s", r.name, rel)
				}
				if errors.Is(err, errNotApplicable) {
					t.Skip("not read by " + r.name)
				}
				if exp.accepted {
					require.NoError(t, err)
					return
				}
				require.Error(t, err)
				var ie *input.Error
				require.ErrorAs(t, err, &ie, "not an *input.Error: %v", err)
				assert.Equal(t, path, ie.File)
				assert.Contains(t, err.Error(), path+exp.want)
				assert.Less(t, len(err.Error()), len(path)+300, "long message: %.300s", err.Error())
				assert.NotContains(t, err.Error(), "\n")
			})
		}
	}
}

package calibrate_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/calibrate"
	"github.com/retrieval-gate/retrieval-gate/internal/gitread"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
)

// askedRepos is a Repos that records the paths the git guards ask for and
// finds no repository.
type askedRepos struct{ asked []string }

func (r *askedRepos) Repo(_ context.Context, path string) (*gitread.Repo, string, error) {
	r.asked = append(r.asked, path)
	return nil, "", &calibrate.InputError{Msg: path + " is not inside a git repository"}
}

func (r *askedRepos) Working(string) (fs.File, error) { return nil, errors.New("not asked") }

// TestRunReadsItsReaders: calibrate.Run reads the lock and the labels it is
// given (named by paths that do not exist: nothing is opened), and its git
// guards go through the Repos given, by the inputs' names; without one they
// are refused.
func TestRunReadsItsReaders(t *testing.T) {
	ctx := context.Background()
	read := func(name string) *bytes.Reader {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "calibrate", name))
		require.NoError(t, err)
		return bytes.NewReader(b)
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "calibrate", "lock.json"))
	require.NoError(t, err)
	lock, err := labelfile.ReadLock(data, "missing/lock.json")
	require.NoError(t, err)
	in := func() calibrate.In {
		return calibrate.In{Lock: lock, Human: calibrate.Reader{Name: "missing/human.jsonl", R: read("human.jsonl")},
			Judge: calibrate.Reader{Name: "missing/judge.jsonl", R: read("judge.jsonl")}}
	}
	res, err := calibrate.Run(ctx, in(), calibrate.Options{Resamples: 100, Seed: 1})
	require.NoError(t, err)
	require.NotEmpty(t, res.Dimensions)

	_, err = calibrate.Run(ctx, in(), calibrate.Options{LockBase: "main"})
	require.ErrorContains(t, err, "need the repositories")

	for _, tc := range []struct {
		opt  calibrate.Options
		want []string
	}{
		{calibrate.Options{LockBase: "main"}, []string{"missing/lock.json"}},
		{calibrate.Options{GitAnchoring: true}, []string{"missing/human.jsonl"}},
	} {
		repos := &askedRepos{}
		i := in()
		i.Repos = repos
		_, err = calibrate.Run(ctx, i, tc.opt)
		var ie *calibrate.InputError
		require.ErrorAs(t, err, &ie)
		assert.Equal(t, tc.want, repos.asked)
	}
}

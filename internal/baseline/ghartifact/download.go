package ghartifact

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline/ciartifact"
	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// fetch downloads cand's archive, extracts and verifies its baseline file, and
// renames it to dest only when it is whole and valid.
func (c *client) fetch(ctx context.Context, cand *candidate, dest string) (*Found, *Unavailable) {
	a := cand.a
	if a.SizeInBytes > limits.archive {
		return nil, unavailable(ciartifact.TooLarge, "artifact %d is %s, over the %s cap on a baseline archive", a.ID, ciartifact.BytesText(a.SizeInBytes), ciartifact.BytesText(limits.archive))
	}
	dir := filepath.Dir(dest)
	zipPath, un := c.download(ctx, a, dir)
	if un != nil {
		return nil, un
	}
	defer os.Remove(zipPath)

	tmp, err := os.CreateTemp(dir, "."+ciartifact.FileName+".tmp-*")
	if err != nil {
		return nil, unavailable(ciartifact.LocalIO, "could not write the baseline file: %v", github.OneLine(err.Error()))
	}
	tmpName := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	if un := extractFile(ctx, zipPath, a.ID, tmp); un != nil {
		return nil, un
	}
	if err := tmp.Close(); err != nil {
		return nil, unavailable(ciartifact.LocalIO, "could not write the baseline file: %v", github.OneLine(err.Error()))
	}
	schema, un := verify(ctx, tmpName, a.ID)
	if un != nil {
		return nil, un
	}
	if err := os.Rename(tmpName, dest); err != nil {
		return nil, unavailable(ciartifact.LocalIO, "could not write the baseline file: %v", github.OneLine(err.Error()))
	}
	ok = true
	wr := a.WorkflowRun
	return &Found{
		Path: dest, ArtifactID: a.ID, RunID: wr.ID, HeadSHA: wr.HeadSHA,
		CreatedAt: a.CreatedAt, ExpiresAt: a.ExpiresAt, SizeBytes: a.SizeInBytes,
		Schema: schema, Skipped: cand.skipped,
	}, nil
}

// download saves the artifact's zip to a temporary file in dir and returns its path.
func (c *client) download(ctx context.Context, a artifact, dir string) (string, *Unavailable) {
	u := c.endpoint("artifacts", strconv.FormatInt(a.ID, 10), "zip")
	resp, un := c.get(httpretry.WithMaxBody(ctx, limits.archive), u, "application/vnd.github+json")
	if un != nil {
		return "", un
	}
	defer resp.Body.Close()
	final := resp.Request.URL
	if resp.StatusCode != http.StatusOK {
		if !sameOrigin(final, c.api) {
			return "", unavailable(ciartifact.ServerError, "the signed download URL of artifact %d answered %d %s", a.ID, resp.StatusCode, http.StatusText(resp.StatusCode))
		}
		return "", c.apiError(resp, fmt.Sprintf("download artifact %d", a.ID))
	}
	if resp.ContentLength > limits.archive {
		return "", unavailable(ciartifact.TooLarge, "artifact %d is %s, over the %s cap on a baseline archive", a.ID, ciartifact.BytesText(resp.ContentLength), ciartifact.BytesText(limits.archive))
	}
	f, err := os.CreateTemp(dir, ".baseline-artifact-*.zip")
	if err != nil {
		return "", unavailable(ciartifact.LocalIO, "could not store the downloaded artifact: %v", github.OneLine(err.Error()))
	}
	_, err = io.Copy(f, httpretry.LimitBody(resp.Body, resp.ContentLength, limits.archive, redact(final)))
	cerr := f.Close()
	switch {
	case errors.As(err, new(*httpretry.TooLargeError)):
		os.Remove(f.Name())
		return "", unavailable(ciartifact.TooLarge, "artifact %d is over the %s cap on a baseline archive", a.ID, ciartifact.BytesText(limits.archive))
	case err != nil:
		os.Remove(f.Name())
		return "", networkError(ctx, final, err)
	case cerr != nil:
		os.Remove(f.Name())
		return "", unavailable(ciartifact.LocalIO, "could not store the downloaded artifact: %v", github.OneLine(cerr.Error()))
	}
	return f.Name(), nil
}

func extractFile(ctx context.Context, zipPath string, id int64, w io.Writer) *Unavailable {
	f, err := os.Open(zipPath)
	if err != nil {
		return unavailable(ciartifact.LocalIO, "could not read the downloaded artifact back: %v", github.OneLine(err.Error()))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return unavailable(ciartifact.LocalIO, "could not read the downloaded artifact back: %v", github.OneLine(err.Error()))
	}
	return extract(ctx, f, fi.Size(), id, w)
}

// extract copies the archive's FileName entry to w, bounded by MaxFileBytes,
// until ctx ends (inflating 256 MiB takes seconds).
func extract(ctx context.Context, ra io.ReaderAt, size int64, id int64, w io.Writer) *Unavailable {
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return unavailable(ciartifact.Corrupt, "artifact %d is not a readable zip archive (%v)", id, github.OneLine(err.Error()))
	}
	var entry *zip.File
	var names []string
	for _, f := range zr.File {
		if f.Name == ciartifact.FileName {
			entry = f
			break
		}
		if len(names) < 5 {
			names = append(names, strings.TrimSpace(github.OneLine(f.Name)))
		}
	}
	if entry == nil {
		held := "nothing"
		if len(names) > 0 {
			held = strings.Join(names, ", ")
		}
		return unavailable(ciartifact.Corrupt, "artifact %d holds no %s at its root (it holds %s)", id, ciartifact.FileName, held)
	}
	// The declared size, held in an int64 (any size past 2^62 is over every cap).
	if size := int64(min(entry.UncompressedSize64, 1<<62)); size > limits.file {
		return unavailable(ciartifact.TooLarge, "the %s of artifact %d is %s, over the %s cap", ciartifact.FileName, id, ciartifact.BytesText(size), ciartifact.BytesText(limits.file))
	}
	rc, err := entry.Open()
	if err != nil {
		return unavailable(ciartifact.Corrupt, "the %s of artifact %d cannot be read (%v)", ciartifact.FileName, id, github.OneLine(err.Error()))
	}
	defer rc.Close()
	n, err := io.Copy(w, io.LimitReader(ciartifact.CtxReader{Ctx: ctx, R: rc}, limits.file+1))
	switch {
	case err != nil && ctx.Err() != nil:
		return ciartifact.Cancelled(ctx)
	case n > limits.file:
		return unavailable(ciartifact.TooLarge, "the %s of artifact %d expands beyond the %s cap", ciartifact.FileName, id, ciartifact.BytesText(limits.file))
	case errors.Is(err, zip.ErrChecksum), errors.Is(err, zip.ErrFormat), errors.Is(err, io.ErrUnexpectedEOF):
		return unavailable(ciartifact.Corrupt, "the %s of artifact %d is damaged (%v)", ciartifact.FileName, id, github.OneLine(err.Error()))
	case err != nil:
		var pe *os.PathError
		if errors.As(err, &pe) {
			return unavailable(ciartifact.LocalIO, "could not write the baseline file: %v", github.OneLine(err.Error()))
		}
		return unavailable(ciartifact.Corrupt, "the %s of artifact %d is damaged (%v)", ciartifact.FileName, id, github.OneLine(err.Error()))
	}
	return nil
}

// verify checks that path is gzip, that its first line is a JSON object whose
// "schema" starts with SchemaPrefix, and that the whole stream decodes within
// MaxExpandedBytes; it returns the schema.
func verify(ctx context.Context, path string, id int64) (string, *Unavailable) {
	return ciartifact.VerifyFile(ctx, path, fmt.Sprintf("the %s of artifact %d", ciartifact.FileName, id), ciartifact.Limits{Expanded: limits.expanded, Header: limits.header})
}

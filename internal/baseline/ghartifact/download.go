package ghartifact

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// fetch downloads cand's archive, extracts and verifies its baseline file, and
// renames it to dest only when it is whole and valid.
func (c *client) fetch(ctx context.Context, cand *candidate, dest string) (*Found, *Unavailable) {
	a := cand.a
	if a.SizeInBytes > limits.archive {
		return nil, unavailable(TooLarge, "artifact %d is %s, over the %s cap on a baseline archive", a.ID, bytesText(a.SizeInBytes), bytesText(limits.archive))
	}
	dir := filepath.Dir(dest)
	zipPath, un := c.download(ctx, a, dir)
	if un != nil {
		return nil, un
	}
	defer os.Remove(zipPath)

	tmp, err := os.CreateTemp(dir, "."+FileName+".tmp-*")
	if err != nil {
		return nil, unavailable(LocalIO, "could not write the baseline file: %v", github.OneLine(err.Error()))
	}
	tmpName := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	if un := extractFile(zipPath, a.ID, tmp); un != nil {
		return nil, un
	}
	if err := tmp.Close(); err != nil {
		return nil, unavailable(LocalIO, "could not write the baseline file: %v", github.OneLine(err.Error()))
	}
	schema, un := verify(tmpName, a.ID)
	if un != nil {
		return nil, un
	}
	if err := os.Rename(tmpName, dest); err != nil {
		return nil, unavailable(LocalIO, "could not write the baseline file: %v", github.OneLine(err.Error()))
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
			return "", unavailable(ServerError, "the signed download URL of artifact %d answered %d %s", a.ID, resp.StatusCode, http.StatusText(resp.StatusCode))
		}
		return "", c.apiError(resp, fmt.Sprintf("download artifact %d", a.ID))
	}
	if resp.ContentLength > limits.archive {
		return "", unavailable(TooLarge, "artifact %d is %s, over the %s cap on a baseline archive", a.ID, bytesText(resp.ContentLength), bytesText(limits.archive))
	}
	f, err := os.CreateTemp(dir, ".baseline-artifact-*.zip")
	if err != nil {
		return "", unavailable(LocalIO, "could not store the downloaded artifact: %v", github.OneLine(err.Error()))
	}
	_, err = io.Copy(f, httpretry.LimitBody(resp.Body, resp.ContentLength, limits.archive, redact(final)))
	cerr := f.Close()
	switch {
	case errors.As(err, new(*httpretry.TooLargeError)):
		os.Remove(f.Name())
		return "", unavailable(TooLarge, "artifact %d is over the %s cap on a baseline archive", a.ID, bytesText(limits.archive))
	case err != nil:
		os.Remove(f.Name())
		return "", networkError(ctx, final, err)
	case cerr != nil:
		os.Remove(f.Name())
		return "", unavailable(LocalIO, "could not store the downloaded artifact: %v", github.OneLine(cerr.Error()))
	}
	return f.Name(), nil
}

func extractFile(zipPath string, id int64, w io.Writer) *Unavailable {
	f, err := os.Open(zipPath)
	if err != nil {
		return unavailable(LocalIO, "could not read the downloaded artifact back: %v", github.OneLine(err.Error()))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return unavailable(LocalIO, "could not read the downloaded artifact back: %v", github.OneLine(err.Error()))
	}
	return extract(f, fi.Size(), id, w)
}

// extract copies the archive's FileName entry to w, bounded by MaxFileBytes.
func extract(ra io.ReaderAt, size int64, id int64, w io.Writer) *Unavailable {
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return unavailable(Corrupt, "artifact %d is not a readable zip archive (%v)", id, github.OneLine(err.Error()))
	}
	var entry *zip.File
	var names []string
	for _, f := range zr.File {
		if f.Name == FileName {
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
		return unavailable(Corrupt, "artifact %d holds no %s at its root (it holds %s)", id, FileName, held)
	}
	// The declared size, held in an int64 (any size past 2^62 is over every cap).
	if size := int64(min(entry.UncompressedSize64, 1<<62)); size > limits.file {
		return unavailable(TooLarge, "the %s of artifact %d is %s, over the %s cap", FileName, id, bytesText(size), bytesText(limits.file))
	}
	rc, err := entry.Open()
	if err != nil {
		return unavailable(Corrupt, "the %s of artifact %d cannot be read (%v)", FileName, id, github.OneLine(err.Error()))
	}
	defer rc.Close()
	n, err := io.Copy(w, io.LimitReader(rc, limits.file+1))
	switch {
	case n > limits.file:
		return unavailable(TooLarge, "the %s of artifact %d expands beyond the %s cap", FileName, id, bytesText(limits.file))
	case errors.Is(err, zip.ErrChecksum), errors.Is(err, zip.ErrFormat), errors.Is(err, io.ErrUnexpectedEOF):
		return unavailable(Corrupt, "the %s of artifact %d is damaged (%v)", FileName, id, github.OneLine(err.Error()))
	case err != nil:
		var pe *os.PathError
		if errors.As(err, &pe) {
			return unavailable(LocalIO, "could not write the baseline file: %v", github.OneLine(err.Error()))
		}
		return unavailable(Corrupt, "the %s of artifact %d is damaged (%v)", FileName, id, github.OneLine(err.Error()))
	}
	return nil
}

// verify checks that path is gzip, that its first line is a JSON object whose
// "schema" starts with SchemaPrefix, and that the whole stream decodes within
// MaxExpandedBytes; it returns the schema.
func verify(path string, id int64) (string, *Unavailable) {
	return VerifyFile(path, fmt.Sprintf("the %s of artifact %d", FileName, id))
}

// VerifyFile checks a baseline file on disk as Fetch checks the one it
// downloads (gzip, a retrieval-gate schema on the first line, the whole stream
// within MaxExpandedBytes); what names the file in the messages ("the
// baseline.jsonl.gz of artifact 12"). GitLab's --baseline auto uses it too.
func VerifyFile(path, what string) (string, *Unavailable) {
	f, err := os.Open(path)
	if err != nil {
		return "", unavailable(LocalIO, "could not read the baseline file back: %v", github.OneLine(err.Error()))
	}
	defer f.Close()
	return verifyReader(f, what)
}

func verifyReader(r io.Reader, what string) (string, *Unavailable) {
	zr, err := gzip.NewReader(bufio.NewReaderSize(r, 1<<16))
	if err != nil {
		return "", unavailable(Corrupt, "%s is not gzip (%v)", what, github.OneLine(err.Error()))
	}
	defer zr.Close()
	lim := &io.LimitedReader{R: zr, N: limits.expanded + 1}
	br := bufio.NewReaderSize(lim, 1<<16)

	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > limits.header {
			return "", unavailable(Corrupt, "the first line of %s is over %s", what, bytesText(int64(limits.header)))
		}
		if err == nil || errors.Is(err, io.EOF) {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return "", corruptGzip(err, what)
		}
	}
	var head struct {
		Schema *string `json:"schema"`
	}
	line = bytes.TrimSpace(line)
	if err := json.Unmarshal(line, &head); err != nil || len(line) == 0 || line[0] != '{' {
		return "", unavailable(Corrupt, "the first line of %s is not a JSON object", what)
	}
	if head.Schema == nil || !strings.HasPrefix(*head.Schema, SchemaPrefix) {
		got := "none"
		if head.Schema != nil {
			got = strconv.Quote(github.OneLine(*head.Schema))
		}
		return "", unavailable(Corrupt, "%s is not a retrieval-gate baseline (schema %s, want %s…)", what, got, SchemaPrefix)
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		return "", corruptGzip(err, what)
	}
	if lim.N <= 0 {
		return "", unavailable(TooLarge, "%s expands beyond the %s cap", what, bytesText(limits.expanded))
	}
	return *head.Schema, nil
}

func corruptGzip(err error, what string) *Unavailable {
	return unavailable(Corrupt, "%s is damaged (%v)", what, github.OneLine(err.Error()))
}

// bytesText is n in a whole binary unit when it is one, else in bytes.
func bytesText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Package ciartifact is what the baseline's adapters to a CI host share, so that
// neither imports the other: the one file a baseline artifact holds (FileName),
// the caps on it, why no baseline is available (Reason, Unavailable), and the
// verification of a fetched baseline file (VerifyFile: gzip, a retrieval-gate
// schema on the first line, the whole stream within its cap).
// baseline/ghartifact (GitHub Actions) and baseline/glartifact (GitLab CI)
// import it.
package ciartifact

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/github"
)

const (
	// FileName is the one file a baseline artifact holds (at a GitHub
	// artifact zip's root; a GitLab job's artifact path).
	FileName = "baseline.jsonl.gz"
	// SchemaPrefix starts the "schema" field of the baseline file's first line.
	SchemaPrefix = "retrieval-gate/"

	// MaxFileBytes caps the baseline file (256 MiB): in a zip, the zip bomb bound.
	MaxFileBytes int64 = 256 << 20
	// MaxExpandedBytes caps the decompressed baseline file (4 GiB, streamed, never held).
	MaxExpandedBytes int64 = 4 << 30
	// MaxHeaderBytes caps the first line of the baseline file (16 MiB).
	MaxHeaderBytes = 16 << 20
)

// Reason classifies why no baseline is available; it is the code of a
// baseline.Unavailability.
type Reason string

const (
	NoContext    Reason = "no_context"   // not enough to search: no repository, no base branch
	NoArtifact   Reason = "no_artifact"  // no eligible artifact of that name
	Expired      Reason = "expired"      // the newest matching artifact has expired
	Forbidden    Reason = "forbidden"    // 403: the token lacks `actions: read`
	NotFound     Reason = "not_found"    // 404: repository, run or artifact not visible
	Unauthorized Reason = "unauthorized" // 401: bad or expired token
	RateLimited  Reason = "rate_limited" // the host's rate limit is exhausted
	ServerError  Reason = "server_error" // 5xx
	Network      Reason = "network"      // no HTTP answer
	TooLarge     Reason = "too_large"    // beyond one of the caps
	Corrupt      Reason = "corrupt"      // not a zip, no baseline file, bad gzip, wrong schema
	LocalIO      Reason = "local_io"     // the file could not be written here
)

// Unavailable says why there is no baseline. Message is one line for humans (the
// warning and the PR comment's "vs base" line).
type Unavailable struct {
	Reason  Reason
	Message string
}

// Unavailablef is an Unavailable with r and the formatted message.
func Unavailablef(r Reason, format string, args ...any) *Unavailable {
	return &Unavailable{Reason: r, Message: fmt.Sprintf(format, args...)}
}

// Limits are the caps VerifyFile applies (tests lower them).
type Limits struct {
	Expanded int64 // the decompressed file
	Header   int   // its first line
}

// DefaultLimits are MaxExpandedBytes and MaxHeaderBytes.
var DefaultLimits = Limits{Expanded: MaxExpandedBytes, Header: MaxHeaderBytes}

// VerifyFile checks a fetched baseline file on disk: gzip, a first line that
// is a JSON object whose "schema" starts with SchemaPrefix, and the whole
// stream decoded within l.Expanded (so a truncated or corrupt file is caught,
// with its CRC); it returns the schema. what names the file in the messages
// ("the baseline.jsonl.gz of artifact 12"). The decoding (up to l.Expanded,
// seconds at the default 4 GiB) stops soon after ctx ends: the baseline is
// then unavailable (Network, as a download cancelled).
func VerifyFile(ctx context.Context, path, what string, l Limits) (string, *Unavailable) {
	f, err := os.Open(path)
	if err != nil {
		return "", Unavailablef(LocalIO, "could not read the baseline file back: %v", github.OneLine(err.Error()))
	}
	defer f.Close()
	return VerifyReader(ctx, f, what, l)
}

// Cancelled is the baseline unavailable because ctx ended while it was
// fetched or verified.
func Cancelled(ctx context.Context) *Unavailable {
	return Unavailablef(Network, "the baseline search was cancelled (%v)", ctx.Err())
}

// CtxReader reads r until ctx ends, then fails with ctx's error.
type CtxReader struct {
	Ctx context.Context
	R   io.Reader
}

func (c CtxReader) Read(p []byte) (int, error) {
	if err := c.Ctx.Err(); err != nil {
		return 0, err
	}
	return c.R.Read(p)
}

// VerifyReader is VerifyFile on the file's content.
func VerifyReader(ctx context.Context, r io.Reader, what string, l Limits) (string, *Unavailable) {
	zr, err := gzip.NewReader(bufio.NewReaderSize(r, 1<<16))
	if err != nil {
		return "", Unavailablef(Corrupt, "%s is not gzip (%v)", what, github.OneLine(err.Error()))
	}
	defer zr.Close()
	// The context is asked before each read of the decoded stream (64 KiB at
	// a time): inflating that much is moments, whatever the ratio.
	lim := &io.LimitedReader{R: CtxReader{ctx, zr}, N: l.Expanded + 1}
	br := bufio.NewReaderSize(lim, 1<<16)

	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > l.Header {
			return "", Unavailablef(Corrupt, "the first line of %s is over %s", what, BytesText(int64(l.Header)))
		}
		if err == nil || errors.Is(err, io.EOF) {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if ctx.Err() != nil {
				return "", Cancelled(ctx)
			}
			return "", corruptGzip(err, what)
		}
	}
	// The header's keys as they are written: the loader looks up "schema"
	// exactly, so "SCHEMA" or "Schema" (which encoding/json would match into a
	// tagged field) is not the schema.
	var head map[string]json.RawMessage
	line = bytes.TrimSpace(line)
	if err := json.Unmarshal(line, &head); err != nil || len(line) == 0 || line[0] != '{' {
		return "", Unavailablef(Corrupt, "the first line of %s is not a JSON object", what)
	}
	var schema *string
	if raw, ok := head["schema"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &schema); err != nil {
			return "", Unavailablef(Corrupt, "the first line of %s is not a JSON object", what)
		}
	}
	if schema == nil || !strings.HasPrefix(*schema, SchemaPrefix) {
		got := "none"
		if schema != nil {
			got = strconv.Quote(github.OneLine(*schema))
		}
		return "", Unavailablef(Corrupt, "%s is not a retrieval-gate baseline (schema %s, want %s…)", what, got, SchemaPrefix)
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		if ctx.Err() != nil {
			return "", Cancelled(ctx)
		}
		return "", corruptGzip(err, what)
	}
	if lim.N <= 0 {
		return "", Unavailablef(TooLarge, "%s expands beyond the %s cap", what, BytesText(l.Expanded))
	}
	return *schema, nil
}

func corruptGzip(err error, what string) *Unavailable {
	return Unavailablef(Corrupt, "%s is damaged (%v)", what, github.OneLine(err.Error()))
}

// BytesText writes a cap as the messages give it: in GiB, MiB or KiB when it
// is a whole number of them, else in bytes.
func BytesText(n int64) string {
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

package hostile

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/e2e/e2etest"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
	"github.com/retrieval-gate/retrieval-gate/internal/racetest"
	"github.com/retrieval-gate/retrieval-gate/internal/unixtest"
)

// TestHostileMemory runs the built binary on small hostile inputs and servers
// that cost gigabytes before issue 33 (a 1 KB pack, a megabyte of gzip, an
// endless answer) and checks the process's peak RSS (getrusage's ru_maxrss)
// against a bound, with the exit code and the message of its refusal. Linux
// keeps a process's high-water mark across execve, so a child starts from the
// test's own peak: the inputs are written in pieces, never held whole, and the
// bound is an upper bound of the binary's (BENCHMARKS.md has /usr/bin/time's
// figures).
// RG_HOSTILE_KEEP=DIR keeps the generated inputs in DIR, and
// RG_HOSTILE_BINARY=PATH runs another binary (an older one, to see it fail:
// BENCHMARKS.md, "Hostile inputs"); a run is killed after 20 s.
func TestHostileMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary on inputs of tens of megabytes")
	}
	racetest.Skip(t, "a -race binary's memory is not the binary's")
	root, err := e2etest.Root()
	require.NoError(t, err)
	dir := os.Getenv("RG_HOSTILE_KEEP")
	if dir == "" {
		dir = t.TempDir()
	} else {
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}
	demo := filepath.Join(root, "testdata", "demo")
	cal := filepath.Join(root, "testdata", "calibrate")

	type hostile struct {
		name   string
		args   func(t *testing.T) []string
		env    []string
		exit   int
		stderr string
		maxKiB int64
	}
	for _, h := range []hostile{
		{
			name: "pack: a REF_DELTA whose base is itself (calibrate --lock-base)",
			args: func(t *testing.T) []string {
				repo := hostileRepo(t, filepath.Join(dir, "pack-self"), selfRefPack)
				return calibrateArgs(repo, cal)
			},
			exit: 2, stderr: "circular delta chain", maxKiB: 96 << 10,
		},
		{
			name: "pack: a chain of OFS_DELTAs declaring 1.25 GiB (calibrate --lock-base)",
			args: func(t *testing.T) []string {
				repo := hostileRepo(t, filepath.Join(dir, "pack-chain"), longChainPack)
				return calibrateArgs(repo, cal)
			},
			exit: 2, stderr: "declares more than 1073741824 bytes of deltas", maxKiB: 96 << 10,
		},
		{
			name: "baseline: a header, 64 MiB of newlines in gzip, the cases (check --baseline)",
			args: func(t *testing.T) []string {
				p := filepath.Join(dir, "blank-lines.jsonl.gz")
				writeBlankBaseline(t, p, filepath.Join(demo, "baseline.jsonl.gz"), 64)
				return []string{"check", "--cases", filepath.Join(demo, "cases.jsonl"), "--kb", filepath.Join(demo, "kb"), "--comment", "never", "--baseline", p}
			},
			exit: 0, maxKiB: 64 << 10,
		},
		{
			name: "cases: 32 MiB of newlines before the first case (check)",
			args: func(t *testing.T) []string {
				p := filepath.Join(dir, "blank-lines-cases.jsonl")
				first, err := os.ReadFile(filepath.Join(demo, "cases.jsonl"))
				require.NoError(t, err)
				writeRepeated(t, p, nil, '\n', 32<<20, first)
				return []string{"check", "--cases", p, "--kb", filepath.Join(demo, "kb"), "--comment", "never"}
			},
			exit: 0, maxKiB: 48 << 10,
		},
		{
			name: "import: a 12 MiB CSV record of control characters (72 MiB as JSON)",
			args: func(t *testing.T) []string {
				p := filepath.Join(dir, "control-characters.csv")
				writeRepeated(t, p, []byte("query,retrieved\n\""), 1, 12<<20, []byte("\",a\n"))
				return []string{"import", "--format", "csv", "--in", p, "--out", filepath.Join(t.TempDir(), "out.jsonl")}
			},
			exit: 2, stderr: "would be a line of more than 64 MiB once converted", maxKiB: 160 << 10,
		},
		{
			name: "Chroma: an endless heartbeat (retrieve --store chroma)",
			args: func(t *testing.T) []string {
				srv := endlessServer(t, `{"nanosecond heartbeat": "`)
				return []string{"retrieve", "--cases", filepath.Join(demo, "cases.jsonl"), "--kb", filepath.Join(demo, "kb"), "--store", "chroma", "--chroma-url", srv.URL, "--out", filepath.Join(t.TempDir(), "r.jsonl")}
			},
			exit: 2, stderr: "longer than 64 KiB", maxKiB: 64 << 10,
		},
		{
			name: "Batch API: an endless output file (judge --batch)",
			args: func(t *testing.T) []string {
				srv := endlessBatchOutput(t)
				cases := filepath.Join(t.TempDir(), "one.jsonl")
				first, err := os.ReadFile(filepath.Join(demo, "cases.jsonl"))
				require.NoError(t, err)
				line, _, _ := bytes.Cut(first, []byte{'\n'})
				writeFile(t, cases, line, []byte{'\n'})
				out := t.TempDir()
				return []string{"judge", "--batch", "--batch-poll", "10ms", "--kb", filepath.Join(demo, "kb"), "--run", "demo=" + cases, "--k", "1",
					"--judge-url", srv.URL, "--judge-model", "fake", "--cache", filepath.Join(out, "cache.jsonl"), "--qrels", filepath.Join(out, "out.qrels")}
			},
			exit: 2, stderr: "for each of the 1 request(s) it answers: refused, the download stopped there", maxKiB: 64 << 10,
		},
		{
			name: "GitHub: an endless answer to the comment's calls (check --comment always)",
			args: func(t *testing.T) []string {
				return []string{"check", "--cases", filepath.Join(demo, "cases.jsonl"), "--kb", filepath.Join(demo, "kb"), "--comment", "always", "--pr", "7"}
			},
			env:  githubEnv(t, endlessServer(t, `[{"body": "`).URL),
			exit: 0, stderr: "longer than", maxKiB: 96 << 10,
		},
	} {
		t.Run(h.name, func(t *testing.T) {
			bin := hostileBinary()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, h.args(t)...)
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "GITHUB_ACTIONS=", "CI=", "RETRIEVAL_GATE_LLM_API_KEY=sk-hostile-0123456789")
			cmd.Env = append(cmd.Env, h.env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			start := time.Now()
			err := cmd.Run()
			kib, measured := unixtest.MaxRSSKiB(cmd.ProcessState)
			t.Logf("peak RSS %d KiB, %.1f s, exit %d", kib, time.Since(start).Seconds(), e2etest.ExitCode(err))
			assert.Equal(t, h.exit, e2etest.ExitCode(err), stderr.String())
			assert.Contains(t, stderr.String(), h.stderr)
			assert.NotContains(t, stderr.String(), "panic")
			if !measured {
				t.Skip("this platform reports no peak RSS of a child")
			}
			assert.Less(t, kib, h.maxKiB, "peak RSS in KiB")
		})
	}
}

// hostileBinary is the binary the hostile tests run: RG_HOSTILE_BINARY, or
// the one TestMain built.
func hostileBinary() string {
	if bin := os.Getenv("RG_HOSTILE_BINARY"); bin != "" {
		return bin
	}
	return "retrieval-gate"
}

// writeRepeated writes prefix, n bytes c (a megabyte at a time) and suffix.
func writeRepeated(t *testing.T, p string, prefix []byte, c byte, n int, suffix []byte) {
	t.Helper()
	f, err := os.Create(p)
	require.NoError(t, err)
	chunk := bytes.Repeat([]byte{c}, 1<<20)
	_, err = f.Write(prefix)
	for left := n; left > 0 && err == nil; left -= len(chunk) {
		_, err = f.Write(chunk[:min(left, len(chunk))])
	}
	if err == nil {
		_, err = f.Write(suffix)
	}
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func writeFile(t *testing.T, p string, parts ...[]byte) {
	t.Helper()
	f, err := os.Create(p)
	require.NoError(t, err)
	for _, b := range parts {
		_, err = f.Write(b)
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())
}

// writeBlankBaseline writes the baseline src with mib MiB of newlines after
// its header, as gzip members of a megabyte of newlines each (a multi-member
// gzip stream is one stream: each member deflates to about a kilobyte).
func writeBlankBaseline(t *testing.T, p, src string, mib int) {
	t.Helper()
	in, err := os.Open(src)
	require.NoError(t, err)
	defer in.Close()
	zr, err := gzip.NewReader(in)
	require.NoError(t, err)
	var all bytes.Buffer
	_, err = all.ReadFrom(zr)
	require.NoError(t, err)
	header, body, _ := bytes.Cut(all.Bytes(), []byte{'\n'})
	member := func(b []byte) []byte {
		var buf bytes.Buffer
		w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = w.Write(b)
		_ = w.Close()
		return buf.Bytes()
	}
	newlines := member(bytes.Repeat([]byte{'\n'}, 1<<20))
	parts := [][]byte{member(append(header, '\n'))}
	for range mib {
		parts = append(parts, newlines)
	}
	writeFile(t, p, append(parts, member(body))...)
}

func deflated(b []byte) []byte { return deflatedZeros(0, b) }

// deflatedZeros is the zlib stream of n zero bytes then b, deflated a
// megabyte at a time.
func deflatedZeros(n int, b []byte) []byte {
	var buf bytes.Buffer
	w, _ := zlib.NewWriterLevel(&buf, zlib.BestCompression)
	zeros := make([]byte, 1<<20)
	for left := n; left > 0; left -= len(zeros) {
		_, _ = w.Write(zeros[:min(left, len(zeros))])
	}
	_, _ = w.Write(b)
	_ = w.Close()
	return buf.Bytes()
}

// packEntry appends a pack entry's header: type and inflated size.
func packEntry(p *bytes.Buffer, typ int, size uint64) {
	c := byte(typ<<4) | byte(size&0x0f)
	for size >>= 4; size > 0; size >>= 7 {
		p.WriteByte(c | 0x80)
		c = byte(size & 0x7f)
	}
	p.WriteByte(c)
}

// packFiles are a pack and its version 2 index of one object id at offset off.
func packFiles(pack []byte, id [20]byte, off int) (idx, pk []byte) {
	var ix bytes.Buffer
	ix.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	for i := range 256 {
		n := uint32(0)
		if i >= int(id[0]) {
			n = 1
		}
		_ = binary.Write(&ix, binary.BigEndian, n)
	}
	ix.Write(id[:])
	ix.Write(make([]byte, 4))
	_ = binary.Write(&ix, binary.BigEndian, uint32(off))
	ix.Write(make([]byte, 40))
	return ix.Bytes(), append(pack, make([]byte, 20)...)
}

func packHeader(n uint32) *bytes.Buffer {
	var p bytes.Buffer
	p.WriteString("PACK")
	_ = binary.Write(&p, binary.BigEndian, uint32(2))
	_ = binary.Write(&p, binary.BigEndian, n)
	return &p
}

// selfRefPack is one REF_DELTA whose base is itself: a delta that declares
// 256 KiB and deflates to a few hundred bytes. The reader recursed 10,000
// times, holding a delta each (2.6 GB).
func selfRefPack(id [20]byte) (idx, pk []byte) {
	p := packHeader(1)
	packEntry(p, 7, 256<<10)
	p.Write(id[:])
	p.Write(deflatedZeros(256<<10, nil))
	return packFiles(p.Bytes(), id, 12)
}

// longChainPack is a blob and 20 OFS_DELTAs on one another, each declaring
// 64 MiB of zeros (64 KiB deflated): the reader inflated and held them all.
func longChainPack(id [20]byte) (idx, pk []byte) {
	p := packHeader(21)
	packEntry(p, 3, 1)
	p.Write(deflated([]byte{'x'}))
	delta := deflatedZeros(64<<20, nil)
	prev := 12
	for range 20 {
		off := p.Len()
		packEntry(p, 6, 64<<20)
		rel := uint64(off - prev)
		b := []byte{byte(rel & 0x7f)}
		for rel >>= 7; rel > 0; rel >>= 7 {
			rel--
			b = append([]byte{byte(0x80 | rel&0x7f)}, b...)
		}
		p.Write(b)
		p.Write(delta)
		prev = off
	}
	return packFiles(p.Bytes(), id, prev)
}

// hostileRepo makes a git directory at dir whose branch main names the pack's
// object, and the calibrate demo's label files and lock beside it.
func hostileRepo(t *testing.T, dir string, pack func(id [20]byte) (idx, pk []byte)) string {
	t.Helper()
	id := sha1.Sum([]byte("hostile"))
	g := filepath.Join(dir, ".git")
	require.NoError(t, os.MkdirAll(filepath.Join(g, "objects", "pack"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(g, "refs", "heads"), 0o755))
	writeFile(t, filepath.Join(g, "HEAD"), []byte("ref: refs/heads/main\n"))
	writeFile(t, filepath.Join(g, "refs", "heads", "main"), []byte(fmt.Sprintf("%x\n", id)))
	idx, pk := pack(id)
	writeFile(t, filepath.Join(g, "objects", "pack", "pack-hostile.idx"), idx)
	writeFile(t, filepath.Join(g, "objects", "pack", "pack-hostile.pack"), pk)
	return dir
}

func calibrateArgs(repo, cal string) []string {
	for _, f := range []string{"human.jsonl", "judge.jsonl", "lock.json"} {
		data, err := os.ReadFile(filepath.Join(cal, f))
		if err == nil {
			err = os.WriteFile(filepath.Join(repo, f), data, 0o644)
		}
		if err != nil {
			panic(err)
		}
	}
	return []string{"calibrate", "--human", filepath.Join(repo, "human.jsonl"), "--judge", filepath.Join(repo, "judge.jsonl"),
		"--lock", filepath.Join(repo, "lock.json"), "--lock-base", "main", "--comment", "never"}
}

// endlessServer answers every request 200 with head and then 'a' for ever.
func endlessServer(t *testing.T, head string) *httptest.Server {
	t.Helper()
	chunk := []byte(strings.Repeat("a", 64<<10))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(head))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// endlessBatchOutput is the fake's Batch API, whose output files never end:
// the download of a file the fake wrote (not the one uploaded) is endless.
func endlessBatchOutput(t *testing.T) *httptest.Server {
	t.Helper()
	fake := llmtest.New(llmtest.Options{})
	t.Cleanup(fake.Close)
	u, err := url.Parse(fake.URL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(u)
	chunk := []byte(strings.Repeat("a", 64<<10))
	var mu sync.Mutex
	uploaded := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		up := uploaded
		mu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/content") && up != "" && !strings.Contains(r.URL.Path, "/"+up+"/") {
			w.WriteHeader(http.StatusOK)
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
			return
		}
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/files") {
			rec := httptest.NewRecorder()
			proxy.ServeHTTP(rec, r)
			if i := strings.Index(rec.Body.String(), `"id":"`); i >= 0 {
				id, _, _ := strings.Cut(rec.Body.String()[i+6:], `"`)
				mu.Lock()
				uploaded = id
				mu.Unlock()
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// githubEnv is a pull request's Actions environment whose API is at api.
func githubEnv(t *testing.T, api string) []string {
	t.Helper()
	ev := filepath.Join(t.TempDir(), "event.json")
	writeFile(t, ev, []byte(`{"number":7,"pull_request":{"number":7}}`))
	return []string{"GITHUB_API_URL=" + api, "GITHUB_REPOSITORY=octo/repo", "GITHUB_TOKEN=ghs_hostile0123456789", "GITHUB_EVENT_NAME=pull_request", "GITHUB_EVENT_PATH=" + ev}
}

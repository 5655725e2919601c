package gitread

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/unixtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testEntry is one entry of a pack built by buildPack: a whole object (typ
// 1-4) or a delta on entry base (OFS_DELTA, an index into the entries) or on
// baseID (REF_DELTA); size overrides the declared size when > 0.
type testEntry struct {
	typ    int
	data   []byte
	base   int
	baseID ID
	id     ID // the id the index gives the entry
}

// buildPack writes a pack of the entries and its version 2 index.
func buildPack(es []testEntry) (idx, pk []byte, offs []int64) {
	var p bytes.Buffer
	p.WriteString("PACK")
	_ = binary.Write(&p, binary.BigEndian, uint32(2))
	_ = binary.Write(&p, binary.BigEndian, uint32(len(es)))
	for _, e := range es {
		off := int64(p.Len())
		offs = append(offs, off)
		size := uint64(len(e.data))
		c := byte(e.typ<<4) | byte(size&0x0f)
		size >>= 4
		for size > 0 {
			p.WriteByte(c | 0x80)
			c = byte(size & 0x7f)
			size >>= 7
		}
		p.WriteByte(c)
		switch e.typ {
		case objOfsDelta:
			rel := uint64(off - offs[e.base])
			var b []byte
			b = append(b, byte(rel&0x7f))
			for rel >>= 7; rel > 0; rel >>= 7 {
				rel--
				b = append([]byte{byte(0x80 | rel&0x7f)}, b...)
			}
			p.Write(b)
		case objRefDelta:
			p.Write(e.baseID[:])
		}
		p.Write(deflate(e.data))
	}
	p.Write(make([]byte, 20))
	order := make([]int, len(es))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return bytes.Compare(es[a].id[:], es[b].id[:]) })
	var ix bytes.Buffer
	ix.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	for i := range 256 {
		n := 0
		for _, k := range order {
			if int(es[k].id[0]) <= i {
				n++
			}
		}
		_ = binary.Write(&ix, binary.BigEndian, uint32(n))
	}
	for _, k := range order {
		ix.Write(es[k].id[:])
	}
	ix.Write(make([]byte, 4*len(es)))
	for _, k := range order {
		_ = binary.Write(&ix, binary.BigEndian, uint32(offs[k]))
	}
	ix.Write(make([]byte, 40))
	return ix.Bytes(), p.Bytes(), offs
}

// insertDelta is a delta from a base of src bytes to n bytes of 'x' (inserts
// of 127 bytes): declared and inflated, it is about n bytes.
func insertDelta(src, n int) []byte {
	var d []byte
	d = binary.AppendUvarint(d, uint64(src))
	d = binary.AppendUvarint(d, uint64(n))
	chunk := append([]byte{127}, bytes.Repeat([]byte{'x'}, 127)...)
	for left := n; left > 0; left -= 127 {
		if left >= 127 {
			d = append(d, chunk...)
			continue
		}
		d = append(d, byte(left))
		d = append(d, bytes.Repeat([]byte{'x'}, left)...)
	}
	return d
}

// packRepo writes a repository whose only objects are the pack's, with HEAD
// on refs/heads/main at head.
func packRepo(t *testing.T, idx, pk []byte, head ID) string {
	t.Helper()
	dir := t.TempDir()
	g := filepath.Join(dir, ".git")
	require.NoError(t, os.MkdirAll(filepath.Join(g, "objects", "pack"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(g, "refs", "heads"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(g, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(g, "refs", "heads", "main"), []byte(head.String()+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(g, "objects", "pack", "pack-x.idx"), idx, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(g, "objects", "pack", "pack-x.pack"), pk, 0o644))
	return dir
}

// allocated is the bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestHostileDeltaChains: a REF_DELTA whose base is itself, or a delta on it,
// is refused as circular before any delta is inflated (it recursed 10,000
// times holding a delta each: a 1 KB pack took gigabytes); a chain whose
// deltas declare more than the chain's cap is refused before any is
// inflated; and a long chain within the cap is applied a delta at a time.
func TestHostileDeltaChains(t *testing.T) {
	var self ID
	self[0] = 0x42
	big := make([]byte, 256<<10) // a delta that declares 256 KiB and deflates to a few hundred bytes
	t.Run("REF_DELTA on itself", func(t *testing.T) {
		idx, pk, _ := buildPack([]testEntry{{typ: objRefDelta, data: big, baseID: self, id: self}})
		r, err := Discover(packRepo(t, idx, pk, self))
		require.NoError(t, err)
		var rerr error
		n := allocated(func() { _, _, rerr = r.Read(self) })
		var ce *CorruptError
		require.ErrorAs(t, rerr, &ce)
		assert.Contains(t, rerr.Error(), "circular delta chain")
		assert.Less(t, n, uint64(4<<20), "bytes allocated")
	})
	t.Run("two REF_DELTAs on each other", func(t *testing.T) {
		var other ID
		other[0] = 0x43
		idx, pk, _ := buildPack([]testEntry{
			{typ: objRefDelta, data: big, baseID: other, id: self},
			{typ: objRefDelta, data: big, baseID: self, id: other},
		})
		r, err := Discover(packRepo(t, idx, pk, self))
		require.NoError(t, err)
		_, _, err = r.Read(self)
		assert.ErrorContains(t, err, "circular delta chain")
	})
	t.Run("chain over its cap", func(t *testing.T) {
		const d = 127 * 4096 // ~508 KiB a delta
		es := []testEntry{{typ: 3, data: []byte("base"), id: ID{1}}}
		for i := range 40 {
			src := d
			if i == 0 {
				src = 4
			}
			es = append(es, testEntry{typ: objOfsDelta, data: insertDelta(src, d), base: i, id: ID{byte(2 + i)}})
		}
		idx, pk, offs := buildPack(es)
		r, err := Discover(packRepo(t, idx, pk, ID{1}))
		require.NoError(t, err)
		r.MaxObjectSize = 1 << 20 // the chain's cap: 16 MiB of deltas; these declare 20 MiB
		var rerr error
		n := allocated(func() { _, _, rerr = r.Read(ID{41}) })
		var tl *TooLargeError
		require.ErrorAs(t, rerr, &tl)
		assert.True(t, tl.Chain)
		assert.Contains(t, rerr.Error(), "declares more than 16777216 bytes of deltas")
		assert.Less(t, n, uint64(1<<20), "bytes allocated: nothing is inflated")
		// Within the cap the chain is applied a delta at a time, from the base up.
		r.MaxObjectSize = 2 << 20
		require.NoError(t, r.loadPacks())
		typ, data, err := r.readPacked(r.packs[0], offs[40])
		require.NoError(t, err)
		assert.Equal(t, TypeBlob, typ)
		assert.Equal(t, bytes.Repeat([]byte{'x'}, d), data)
	})
}

// TestSpecialFiles: a FIFO, a directory or a socket where git keeps a file is
// refused at once (open(2) of a FIFO waited for a writer forever: still
// running 12 minutes after SIGTERM).
func TestSpecialFiles(t *testing.T) {
	for _, name := range []string{"HEAD", "packed-refs", "refs/heads/main", "config", "commondir", "shallow", "objects/info/alternates"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			g := filepath.Join(dir, ".git")
			for _, d := range []string{"objects/info", "refs/heads"} {
				require.NoError(t, os.MkdirAll(filepath.Join(g, d), 0o755))
			}
			if name != "HEAD" {
				require.NoError(t, os.WriteFile(filepath.Join(g, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
			}
			unixtest.Mkfifo(t, filepath.Join(g, name), 0o644)
			done := make(chan error, 1)
			go func() {
				r, err := Discover(dir)
				if err == nil {
					_, _, err = r.Head()
				}
				if err == nil {
					_, err = r.ResolveCommit("refs/tags/v1")
				}
				done <- err
			}()
			select {
			case err := <-done:
				if name == "HEAD" {
					assert.ErrorIs(t, err, ErrNotRepository) // not a git directory without a regular HEAD
					return
				}
				if name == "commondir" || name == "objects/info/alternates" {
					// Read as absent (git reads them only when they are files); the
					// FIFO is never opened for a read.
					return
				}
				require.Error(t, err)
				require.ErrorIs(t, err, errNotRegular)
				assert.Contains(t, err.Error(), "a named pipe")
			case <-time.After(10 * time.Second):
				t.Fatal("blocked on the FIFO")
			}
		})
	}
}

// TestSymlinksOut: a ref, HEAD or packed-refs that is a symbolic link out of
// the git directory is not followed, and no error shows a file's content (the
// first line of a file outside the repository was printed).
func TestSymlinksOut(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte("root:SECRET-CONTENT:0:0\n"), 0o644))
	for _, name := range []string{"HEAD", "refs/heads/main", "packed-refs", "config"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			g := filepath.Join(dir, ".git")
			for _, d := range []string{"objects", "refs/heads"} {
				require.NoError(t, os.MkdirAll(filepath.Join(g, d), 0o755))
			}
			if name != "HEAD" {
				require.NoError(t, os.WriteFile(filepath.Join(g, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
			}
			require.NoError(t, os.Symlink(secret, filepath.Join(g, name)))
			r, err := Discover(dir)
			if err == nil {
				_, _, err = r.Head() // main has no loose file: packed-refs is looked up
			}
			require.Error(t, err)
			assert.NotContains(t, err.Error(), "SECRET")
			assert.ErrorIs(t, err, errOutside)
		})
	}
	t.Run("a ref whose content is not an id", func(t *testing.T) {
		dir := t.TempDir()
		g := filepath.Join(dir, ".git")
		for _, d := range []string{"objects", "refs/heads"} {
			require.NoError(t, os.MkdirAll(filepath.Join(g, d), 0o755))
		}
		require.NoError(t, os.WriteFile(filepath.Join(g, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(g, "refs/heads/main"), []byte("SECRET-CONTENT\n"), 0o644))
		r, err := Discover(dir)
		require.NoError(t, err)
		_, _, err = r.Head()
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "SECRET")
		require.NoError(t, os.WriteFile(filepath.Join(g, "refs/heads/main"), []byte("ref: SECRET..CONTENT\n"), 0o644))
		_, _, err = r.Head()
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "SECRET")
		_, err = r.HeadRef()
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "SECRET")
	})
	t.Run("links within the git directory are followed", func(t *testing.T) {
		dir := t.TempDir()
		g := filepath.Join(dir, ".git")
		for _, d := range []string{"objects", "refs/heads"} {
			require.NoError(t, os.MkdirAll(filepath.Join(g, d), 0o755))
		}
		id := strings.Repeat("ab", 20)
		require.NoError(t, os.WriteFile(filepath.Join(g, "refs/heads/main"), []byte(id+"\n"), 0o644))
		// git's old symbolic ref: a link whose target is a ref name.
		require.NoError(t, os.Symlink("refs/heads/main", filepath.Join(g, "HEAD")))
		require.NoError(t, os.Symlink("main", filepath.Join(g, "refs/heads/alias")))
		r, err := Discover(dir)
		require.NoError(t, err)
		got, ok, err := r.Head()
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, id, got.String())
		full, err := r.HeadRef()
		require.NoError(t, err)
		assert.Equal(t, "refs/heads/main", full, "HEAD as a link to a ref name is symbolic")
		got, ok, err = r.ref("refs/heads/alias", 0)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, id, got.String())
	})
}

package gitread

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func deflate(b []byte) []byte {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	_, _ = w.Write(b)
	_ = w.Close()
	return buf.Bytes()
}

// FuzzLooseObject: any bytes as a loose object file give an object within the cap
// whose header agrees with its length, or an error; never a panic. The
// agreement is checked against the file inflated here, apart from
// readLoose: an accepted object's inflated bytes are exactly "TYPE SIZE\x00"
// and its data, its type's name and its length in decimal (git's own
// header), nothing before, between or after.
func FuzzLooseObject(f *testing.F) {
	f.Add(deflate([]byte("blob 3\x00abc")))
	f.Add(deflate([]byte("commit 0\x00")))
	f.Add(deflate([]byte("tree 99999999999999\x00")))
	f.Add(deflate([]byte("blob 3\x00abcd")))
	f.Add(deflate([]byte("blob 03\x00abc")))
	f.Add([]byte("not zlib"))
	f.Fuzz(func(t *testing.T, b []byte) {
		const maxSize = 1 << 16
		typ, data, err := readLoose(bytes.NewReader(b), maxSize, "fuzz")
		if err != nil {
			return
		}
		if typ < TypeCommit || typ > TypeTag || len(data) > maxSize {
			t.Fatalf("type %d, %d bytes", typ, len(data))
		}
		zr, zerr := zlib.NewReader(bytes.NewReader(b))
		require.NoError(t, zerr, "accepted, but not a zlib stream")
		raw, rerr := io.ReadAll(io.LimitReader(zr, maxSize+64))
		require.NoError(t, rerr, "accepted, but its stream does not inflate whole")
		want := append([]byte(typ.String()+" "+strconv.Itoa(len(data))+"\x00"), data...)
		if !bytes.Equal(raw, want) {
			t.Fatalf("accepted %s of %d bytes from the inflated %q", typ, len(data), raw)
		}
	})
}

// FuzzParseCommit: any content parses or is refused, never a panic. What
// parses has exactly one "tree" line among its headers (the lines before the
// first empty one, continuations apart) and a "parent" line for each of its
// parents, in order, each a full id that spells the one parsed.
func FuzzParseCommit(f *testing.F) {
	f.Add([]byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nparent 4b825dc642cb6eb9a060e54bf8d69288fbee4904\ncommitter t <t@e> 1700000000 +0000\n\nmsg\n"))
	f.Add([]byte("tree x\n"))
	f.Add([]byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\ntree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"))
	f.Add([]byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\ntree 4b825dc642cb6eb9a060e54bf8d69288fbee4905\n"))
	f.Add([]byte("parent 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, _ = parseTag(b)
		c, err := ParseCommit(b)
		if err != nil {
			return
		}
		if c == nil {
			t.Fatal("nil commit without an error")
		}
		var trees, parents []string
		for _, line := range strings.Split(string(b), "\n") {
			if line == "" {
				break // the message follows
			}
			if key, val, _ := strings.Cut(line, " "); key == "tree" {
				trees = append(trees, val)
			} else if key == "parent" {
				parents = append(parents, val)
			}
		}
		require.Len(t, trees, 1, "a commit parsed from %q", b)
		assert.Equal(t, c.Tree.String(), strings.ToLower(trees[0]))
		got := make([]string, len(c.Parents))
		for i, p := range c.Parents {
			got[i] = p.String()
		}
		want := make([]string, len(parents))
		for i, p := range parents {
			want[i] = strings.ToLower(p)
		}
		assert.Equal(t, want, got, "the parents of %q", b)
	})
}

// FuzzParseTree: a tree's content is accepted exactly when it is a
// sequence of "MODE NAME\x00" + 20-byte id entries (MODE 1 to 7 octal
// digits, NAME non-empty), and then the entries are those, in order: checked
// against refTree, a reader of the same grammar written apart from ParseTree.
func FuzzParseTree(f *testing.F) {
	f.Add([]byte("100644 a.txt\x00" + strings.Repeat("\x01", 20) + "40000 dir\x00" + strings.Repeat("\x02", 20)))
	f.Add([]byte("100644 a"))
	f.Add([]byte("0100644 a\x00" + strings.Repeat("\x03", 20)))
	f.Add([]byte("10064x a\x00" + strings.Repeat("\x03", 20)))
	f.Add([]byte("00100644 a\x00" + strings.Repeat("\x03", 20))) // 8 digits: refused
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := ParseTree(b)
		want, ok := refTree(b)
		if err != nil {
			require.False(t, ok, "refused %q: %v", b, err)
			return
		}
		require.True(t, ok, "accepted %q", b)
		require.Equal(t, want, es)
	})
}

// refTree reads a tree byte by byte: the reference FuzzParseTree checks
// ParseTree against.
func refTree(b []byte) ([]TreeEntry, bool) {
	var es []TreeEntry
	i := 0
	for i < len(b) {
		var mode uint32
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '7' {
			mode = mode*8 + uint32(b[i]-'0')
			i++
			n++
		}
		if n == 0 || n > 7 || i >= len(b) || b[i] != ' ' {
			return nil, false
		}
		i++
		start := i
		for i < len(b) && b[i] != 0 {
			i++
		}
		if i == start || i >= len(b) {
			return nil, false
		}
		e := TreeEntry{Mode: mode, Name: string(b[start:i])}
		i++
		if len(b)-i < 20 {
			return nil, false
		}
		copy(e.ID[:], b[i:i+20])
		i += 20
		es = append(es, e)
	}
	return es, true
}

// FuzzApplyDelta: a delta never produces more than its declared size or the
// cap, and never reads outside its base; and it is applied as git applies it:
// the result and whether it is refused agree with refDelta, a transcription
// of git's patch_delta written apart from applyDelta.
func FuzzApplyDelta(f *testing.F) {
	f.Add([]byte("hello world"), []byte{11, 5, 0x90, 5})                                   // copy 5 from 0
	f.Add([]byte("abc"), []byte{3, 4, 0x91, 1, 2, 2, 'x', 'y'})                            // copy, insert
	f.Add([]byte(""), []byte{0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 1})                    // huge result
	f.Add([]byte("abc"), []byte{3, 3, 0x80})                                               // copy 0x10000: out of range
	f.Add([]byte("abc"), []byte{3, 2, 0xb1, 1, 1, 0})                                      // copy 1 from 1, a zero size byte
	f.Add([]byte("0123456789abcdefXYZ"), []byte{19, 1, 0x93, 0, 1, 1})                     // copy from 256: out of range
	f.Add(bytes.Repeat([]byte("0123456789abcdef"), 17), []byte{0x90, 2, 1, 0x93, 2, 1, 1}) // copy 1 from 258
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		out, err := applyDelta(base, delta, 1<<16)
		want, ok := refDelta(base, delta, 1<<16)
		if err != nil {
			require.False(t, ok, "refused: %v; git gives %q", err, want)
			return
		}
		require.True(t, ok, "accepted %q, git refuses", out)
		require.Equal(t, want, out)
		require.LessOrEqual(t, len(out), 1<<16)
	})
}

// refDelta applies a delta the way git's patch_delta does (a remaining size
// counted down, every command checked against it), capped at max bytes.
func refDelta(base, delta []byte, max int) ([]byte, bool) {
	pos := 0
	hdr := func() (uint64, bool) {
		var v uint64
		shift := 0
		for {
			if pos >= len(delta) || shift > 63 {
				return 0, false
			}
			c := delta[pos]
			pos++
			v |= uint64(c&0x7f) << shift
			shift += 7
			if c&0x80 == 0 {
				return v, true
			}
		}
	}
	src, ok := hdr()
	if !ok || src != uint64(len(base)) {
		return nil, false
	}
	size, ok := hdr()
	if !ok || size > uint64(max) {
		return nil, false
	}
	var out []byte
	for pos < len(delta) {
		cmd := delta[pos]
		pos++
		if cmd == 0 {
			return nil, false
		}
		if cmd&0x80 == 0 {
			if uint64(cmd) > size || len(delta)-pos < int(cmd) {
				return nil, false
			}
			out = append(out, delta[pos:pos+int(cmd)]...)
			pos += int(cmd)
			size -= uint64(cmd)
			continue
		}
		var off, n uint64
		for i, bit := range []byte{0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40} {
			if cmd&bit == 0 {
				continue
			}
			if pos >= len(delta) {
				return nil, false
			}
			if i < 4 {
				off |= uint64(delta[pos]) << (8 * i)
			} else {
				n |= uint64(delta[pos]) << (8 * (i - 4))
			}
			pos++
		}
		if n == 0 {
			n = 0x10000
		}
		if off+n > uint64(len(base)) || n > size {
			return nil, false
		}
		out = append(out, base[off:off+n]...)
		size -= n
	}
	if size != 0 {
		return nil, false
	}
	if out == nil {
		out = []byte{}
	}
	return out, true
}

// FuzzPack: any index and pack bytes open and read, or are refused with an
// error; a delta chain (OFS_DELTA in the pack, REF_DELTA through the index)
// ends, is refused as circular, too deep or too large, and never yields more
// than the cap.
func FuzzPack(f *testing.F) {
	idxb, packb, off2, id := seedPack()
	f.Add(idxb, packb, off2)
	var self ID
	self[0] = 0xa9
	ix2, pk2, offs := buildPack([]testEntry{{typ: objRefDelta, data: []byte{3, 3, 0x90, 3}, baseID: self, id: self}})
	f.Add(ix2, pk2, offs[0])
	// A tree "ab", a delta on it to "abX", and one on that to "YabX".
	ix3, pk3, offs3 := buildPack([]testEntry{
		{typ: int(TypeTree), data: []byte("ab")},
		{typ: objOfsDelta, data: []byte{2, 3, 0x90, 2, 1, 'X'}, base: 0},
		{typ: objOfsDelta, data: []byte{3, 4, 1, 'Y', 0x90, 3}, base: 1},
	})
	f.Add(ix3, pk3, offs3[2])
	f.Fuzz(func(t *testing.T, idxb, packb []byte, off int64) {
		ixr, err := openIndex(bytes.NewReader(idxb), int64(len(idxb)), "fuzz.idx")
		if err != nil {
			ixr = nil
		} else {
			for i := uint32(0); i < ixr.n && i < 64; i++ {
				if _, err := ixr.offset(i); err != nil {
					break
				}
			}
			_, _, _ = ixr.find(id)
			_, _ = ixr.withPrefix(hexPrefix{s: "a9"}, 10)
		}
		p, err := openPack(bytes.NewReader(packb), int64(len(packb)), "fuzz.pack")
		if err != nil {
			return
		}
		// The repository holds this pack alone: a REF_DELTA's base is looked up
		// in its index (a chain may come back to itself).
		r := &Repo{MaxObjectSize: 1 << 16}
		pk := &pack{idx: ixr, pack: p}
		if ixr != nil {
			r.packs, r.loaded = []*pack{pk}, true
		}
		// The model: up to 3 entries followed along OFS_DELTA links; when the
		// walk ends on a whole object, the entry read is that object with the
		// deltas applied one by one, its type the object's.
		start := off
		var deltas [][]byte
		var base []byte
		var baseTyp Type
		for range 3 {
			h, err := p.readHeader(off, 1<<16)
			if err != nil {
				return
			}
			data, err := p.inflate(h)
			if err != nil {
				return
			}
			if len(data) > 1<<16 || uint64(len(data)) != h.size {
				t.Fatalf("%d bytes inflated, %d declared, the cap %d", len(data), h.size, 1<<16)
			}
			if h.typ != objOfsDelta {
				if h.typ != objRefDelta {
					base, baseTyp = data, Type(h.typ)
				}
				break
			}
			deltas = append(deltas, data)
			off = h.baseOff
		}
		typ, data, err := r.readPacked(pk, start)
		if err == nil && len(data) > 1<<16 {
			t.Fatalf("%d bytes over the cap", len(data))
		}
		if base == nil {
			return
		}
		want, werr := base, error(nil)
		for i := len(deltas) - 1; i >= 0 && werr == nil; i-- {
			want, werr = applyDelta(want, deltas[i], 1<<16)
		}
		var tl *TooLargeError
		switch {
		case werr != nil:
			require.Error(t, err, "read an entry whose deltas do not apply (%v)", werr)
		case err != nil:
			require.ErrorAs(t, err, &tl, "refused an entry whose deltas apply")
		default:
			require.Equal(t, baseTyp, typ)
			require.Equal(t, want, data)
		}
	})
}

// FuzzRefFiles: packed-refs and config contents, and revision strings, never
// panic; a revision never names a path outside refs (a name validRefName
// accepts is a local path, filepath.IsLocal, and holds no ".."); a packed-refs
// file answers as refPacked, a reader of its lines written apart, says: the
// id of the first "HEX40 NAME" line naming the ref, nothing, or an error at
// the first malformed line.
func FuzzRefFiles(f *testing.F) {
	f.Add([]byte("# pack-refs with: peeled fully-peeled sorted \n4b825dc642cb6eb9a060e54bf8d69288fbee4904 refs/heads/main\n^4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"), "refs/heads/main")
	f.Add([]byte("4b825dc642cb6eb9a060e54bf8d69288fbee4904 refs/tags/v1\n^4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"), "refs/heads/main")
	f.Add([]byte("[core]\n\trepositoryformatversion = 0\n[extensions]\n\tobjectFormat = sha1 ; c\n[remote \"o\"]\nurl=x"), "../../x")
	f.Add([]byte("4b825dc642cb6eb9a060e54bf8d69288fbee4904 refs/heads/a\r\n4B825DC642CB6EB9A060E54BF8D69288FBEE4905 refs/heads/main\r\n"), "refs/heads/main")
	f.Add([]byte("4b825dc642cb6eb9a060e54bf8d69288fbee490 refs/heads/main\n"), "refs/heads/main")
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		id, found, err := findPackedRef(bufio.NewReader(bytes.NewReader(b)), name)
		if len(b) < 60<<10 { // the scanner's line cap is 64 KiB
			wid, wfound, wbad := refPacked(b, name)
			require.Equal(t, wbad, err != nil, "error %v", err)
			require.Equal(t, wfound, found)
			require.Equal(t, wid, id)
		}
		ParseConfig(b)
		if validRefName(name) && (strings.Contains(name, "..") || strings.HasPrefix(name, "/") || !filepath.IsLocal(name)) {
			t.Fatalf("%q accepted as a ref name", name)
		}
	})
}

// refPacked reads a packed-refs file for FuzzRefFiles: comment ('#'), peel
// ('^') and empty lines skipped, every other line "HEX40 NAME".
func refPacked(b []byte, name string) (ID, bool, bool) {
	for _, l := range strings.Split(string(b), "\n") {
		// The line scanner drops a "\r" before the "\n" (or the end),
		// findPackedRef another.
		l = strings.TrimSuffix(strings.TrimSuffix(l, "\r"), "\r")
		if l == "" || l[0] == '#' || l[0] == '^' {
			continue
		}
		if len(l) < 41 || l[40] != ' ' {
			return ID{}, false, true
		}
		var id ID
		for i := range 20 {
			v, err := strconv.ParseUint(l[2*i:2*i+2], 16, 8)
			if err != nil || strings.ContainsAny(l[2*i:2*i+2], "+-_") {
				return ID{}, false, true
			}
			id[i] = byte(v)
		}
		if l[41:] == name {
			return id, true, false
		}
	}
	return ID{}, false, false
}

// seedPack is a pack of a blob "abc" and an OFS_DELTA on it that copies it, with
// its index: the offset of the delta and the blob's id.
func seedPack() ([]byte, []byte, int64, ID) {
	var pk bytes.Buffer
	pk.WriteString("PACK")
	_ = binary.Write(&pk, binary.BigEndian, uint32(2))
	_ = binary.Write(&pk, binary.BigEndian, uint32(1))
	pk.WriteByte(3<<4 | 3)
	pk.Write(deflate([]byte("abc")))
	// an OFS_DELTA on it: copy 3
	off2 := pk.Len()
	pk.WriteByte(6<<4 | 4)
	pk.WriteByte(byte(off2 - 12))
	pk.Write(deflate([]byte{3, 3, 0x90, 3}))
	pk.Write(make([]byte, 20))
	id := HashObject(TypeBlob, []byte("abc"))
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
	_ = binary.Write(&ix, binary.BigEndian, uint32(12))
	ix.Write(make([]byte, 40))
	return ix.Bytes(), pk.Bytes(), int64(off2), id
}

func TestSeedPack(t *testing.T) {
	idxb, packb, off2, id := seedPack()
	ix, err := openIndex(bytes.NewReader(idxb), int64(len(idxb)), "seed.idx")
	require.NoError(t, err)
	i, ok, err := ix.find(id)
	require.NoError(t, err)
	require.True(t, ok)
	off, err := ix.offset(i)
	require.NoError(t, err)
	assert.Equal(t, int64(12), off)
	p, err := openPack(bytes.NewReader(packb), int64(len(packb)), "seed.pack")
	require.NoError(t, err)
	r := &Repo{MaxObjectSize: 1 << 16}
	typ, data, err := r.readPacked(&pack{pack: p}, off2)
	require.NoError(t, err)
	assert.Equal(t, TypeBlob, typ)
	assert.Equal(t, "abc", string(data))
	// Capped below the delta's result: refused, not allocated.
	r.MaxObjectSize = 2
	_, _, err = r.readPacked(&pack{pack: p}, off2)
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
}

// FuzzDeltaChain: a pack of up to 8 entries whose shape the fuzzer picks
// (a blob, an OFS_DELTA on an earlier entry, or a REF_DELTA on any entry,
// itself included) is read entry by entry and compared with a model that
// resolves the same graph: an entry whose chain comes back to itself is
// refused as circular, every other one is its base with one byte added.
// Issue 33 item 1: the delta walk ends on every graph, and never applies a
// delta of a circular chain.
func FuzzDeltaChain(f *testing.F) {
	f.Add([]byte{2})             // a REF_DELTA on itself
	f.Add([]byte{0, 1, 4})       // a blob, an OFS_DELTA on it, another on that
	f.Add([]byte{0, 5, 2})       // a blob, a REF_DELTA on the third entry, itself a REF_DELTA on the first
	f.Add([]byte{0, 8, 5, 1, 7}) // a REF cycle through the second and third entries
	f.Fuzz(func(t *testing.T, shape []byte) {
		if len(shape) == 0 || len(shape) > 8 {
			return
		}
		n := len(shape)
		kind := make([]int, n) // 0 blob, 1 OFS_DELTA, 2 REF_DELTA
		base := make([]int, n)
		for i, b := range shape {
			kind[i], base[i] = int(b%3), int(b/3)%n
			if kind[i] == 1 {
				if i == 0 {
					kind[i] = 0
				} else {
					base[i] = int(b/3) % i
				}
			}
		}
		// The model: each entry's content, or nil when its chain is circular.
		const (
			resolving = 1
			done      = 2
		)
		state := make([]int, n)
		want := make([][]byte, n)
		var resolve func(i int) []byte
		resolve = func(i int) []byte {
			switch state[i] {
			case resolving:
				return nil
			case done:
				return want[i]
			}
			state[i] = resolving
			var out []byte
			if kind[i] == 0 {
				out = []byte{byte('A' + i)}
			} else if b := resolve(base[i]); b != nil {
				out = append(bytes.Clone(b), byte('a'+i))
			}
			state[i], want[i] = done, out
			return out
		}
		for i := range n {
			resolve(i)
		}
		ids := make([]ID, n)
		for i := range ids {
			ids[i][0], ids[i][1] = byte(0x10+i), 0xee
		}
		es := make([]testEntry, n)
		for i := range es {
			es[i] = testEntry{typ: objRefDelta, id: ids[i], base: base[i], baseID: ids[base[i]]}
			switch {
			case kind[i] == 0:
				es[i] = testEntry{typ: 3, data: want[i], id: ids[i]}
			case kind[i] == 1:
				es[i].typ = objOfsDelta
			}
			if kind[i] != 0 {
				// copy the whole base (when it resolves), then insert one byte
				src := len(want[base[i]])
				d := []byte{byte(src), byte(src + 1)}
				if src > 0 {
					d = append(d, 0x90, byte(src))
				}
				es[i].data = append(d, 1, byte('a'+i))
			}
		}
		idxb, packb, offs := buildPack(es)
		ix, err := openIndex(bytes.NewReader(idxb), int64(len(idxb)), "fuzz.idx")
		require.NoError(t, err)
		p, err := openPack(bytes.NewReader(packb), int64(len(packb)), "fuzz.pack")
		require.NoError(t, err)
		pk := &pack{idx: ix, pack: p}
		r := &Repo{MaxObjectSize: 1 << 16, packs: []*pack{pk}, loaded: true}
		for i := range n {
			typ, data, err := r.readPacked(pk, offs[i])
			if want[i] == nil {
				require.ErrorContains(t, err, "circular delta chain", "entry %d of %v", i, shape)
				continue
			}
			require.NoError(t, err, "entry %d of %v", i, shape)
			assert.Equal(t, TypeBlob, typ)
			assert.Equal(t, want[i], data, "entry %d of %v", i, shape)
		}
	})
}

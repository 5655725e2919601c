// Package gitread is a small, read-only reader of git repositories in pure Go: just
// what calibrate's git guards need (--lock-base and --git-anchoring), so the
// released image needs no git. It finds a repository from a directory (a .git
// directory or a .git file, as worktrees and submodules have), resolves a revision
// the way `git rev-parse` does for refs, short names and hex ids, and reads commits,
// trees and blobs from loose objects and packfiles (index v2, OFS_DELTA and
// REF_DELTA). It reads files only: nothing in the repository's configuration is
// executed or followed (no hooks, filters, fsmonitor, includes), so a repository
// owned by another user is as safe to read as any other input. Every object is
// capped (MaxObjectSize) and checked against its id; a corrupt object is an error
// that names it. SHA-256 and reftable repositories are refused with a message.
package gitread

import (
	"bytes"
	"crypto/sha1" //nolint:gosec // git's object ids are SHA-1; this is not a security use
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// ID is a SHA-1 object id.
type ID [20]byte

func (id ID) String() string { return hex.EncodeToString(id[:]) }

// ParseID reads a full 40-digit hex id.
func ParseID(s string) (ID, bool) {
	var id ID
	if len(s) != 40 {
		return id, false
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, false
	}
	return id, true
}

// Type is an object's type.
type Type int

// The object types as a pack numbers them.
const (
	TypeCommit Type = 1
	TypeTree   Type = 2
	TypeBlob   Type = 3
	TypeTag    Type = 4
)

func (t Type) String() string {
	switch t {
	case TypeCommit:
		return "commit"
	case TypeTree:
		return "tree"
	case TypeBlob:
		return "blob"
	case TypeTag:
		return "tag"
	}
	return "type " + strconv.Itoa(int(t))
}

func parseType(s string) (Type, bool) {
	switch s {
	case "commit":
		return TypeCommit, true
	case "tree":
		return TypeTree, true
	case "blob":
		return TypeBlob, true
	case "tag":
		return TypeTag, true
	}
	return 0, false
}

// DefaultMaxObjectSize caps one object (and one delta) in memory, as the other
// readers cap a record.
const DefaultMaxObjectSize = 64 << 20

// CorruptError is an object or file that cannot be what git wrote.
type CorruptError struct {
	What string // the object id or the file
	Msg  string
}

func (e *CorruptError) Error() string { return fmt.Sprintf("corrupt git object %s: %s", e.What, e.Msg) }

// MissingError is an object the repository does not have (a shallow or partial
// clone, or a damaged repository).
type MissingError struct{ ID ID }

func (e *MissingError) Error() string {
	return fmt.Sprintf("git object %s is missing from the repository (a partial clone, or a damaged repository)", e.ID)
}

// TooLargeError is an object over the cap, or (Chain) a delta chain whose
// deltas add up to more than its cap.
type TooLargeError struct {
	What  string
	Size  uint64
	Max   int64
	Chain bool
}

func (e *TooLargeError) Error() string {
	if e.Chain {
		return fmt.Sprintf("the delta chain of the git object %s declares more than %d bytes of deltas (at least %d): refused", e.What, e.Max, e.Size)
	}
	return fmt.Sprintf("git object %s is %d bytes, over the cap of %d bytes", e.What, e.Size, e.Max)
}

// HashObject is git's id of an object: SHA-1 of "TYPE SIZE\x00" and the content.
func HashObject(t Type, data []byte) ID {
	h := sha1.New() //nolint:gosec // git's object ids
	fmt.Fprintf(h, "%s %d\x00", t, len(data))
	h.Write(data)
	var id ID
	copy(id[:], h.Sum(nil))
	return id
}

// HashBlobReader is the blob id of size bytes read from r (as `git hash-object`
// without filters).
func HashBlobReader(r io.Reader, size int64) (ID, error) {
	h := sha1.New() //nolint:gosec // git's object ids
	fmt.Fprintf(h, "blob %d\x00", size)
	n, err := io.Copy(h, r)
	if err != nil {
		return ID{}, err
	}
	if n != size {
		return ID{}, fmt.Errorf("read %d bytes, expected %d (the file changed while it was hashed)", n, size)
	}
	var id ID
	copy(id[:], h.Sum(nil))
	return id, nil
}

// parseLoose reads an inflated loose object: "TYPE SIZE\x00" then the content.
// The size is checked against max before anything is allocated.
func parseLooseHeader(b []byte) (Type, uint64, int, error) {
	i := bytes.IndexByte(b, 0)
	if i < 0 || i > 32 {
		return 0, 0, 0, errors.New("no object header")
	}
	sp := bytes.IndexByte(b[:i], ' ')
	if sp < 0 {
		return 0, 0, 0, errors.New("malformed object header")
	}
	t, ok := parseType(string(b[:sp]))
	if !ok {
		return 0, 0, 0, fmt.Errorf("unknown object type %q", b[:sp])
	}
	ss := string(b[sp+1 : i])
	if ss == "" || (len(ss) > 1 && ss[0] == '0') {
		return 0, 0, 0, fmt.Errorf("malformed object size %q", ss)
	}
	size, err := strconv.ParseUint(ss, 10, 63)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("malformed object size %q", ss)
	}
	return t, size, i + 1, nil
}

// Commit is what the guards need of a commit.
type Commit struct {
	Tree    ID
	Parents []ID
	Time    int64 // committer time (seconds since the epoch); 0 when absent
}

// ParseCommit reads a commit object's content.
func ParseCommit(data []byte) (*Commit, error) {
	c := &Commit{}
	haveTree := false
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		line := data
		if nl >= 0 {
			line, data = data[:nl], data[nl+1:]
		} else {
			data = nil
		}
		if len(line) == 0 {
			break // the message follows
		}
		if line[0] == ' ' {
			continue // continuation of a multi-line header (gpgsig, mergetag)
		}
		key, val, _ := bytes.Cut(line, []byte{' '})
		switch string(key) {
		case "tree":
			if haveTree {
				return nil, errors.New("two tree lines")
			}
			id, ok := ParseID(string(val))
			if !ok {
				return nil, fmt.Errorf("bad tree id %q", val)
			}
			c.Tree, haveTree = id, true
		case "parent":
			id, ok := ParseID(string(val))
			if !ok {
				return nil, fmt.Errorf("bad parent id %q", val)
			}
			c.Parents = append(c.Parents, id)
		case "committer":
			// "Name <email> 1700000000 +0000": the time follows the last '>'.
			if i := bytes.LastIndexByte(val, '>'); i >= 0 {
				f := bytes.Fields(val[i+1:])
				if len(f) > 0 {
					if t, err := strconv.ParseInt(string(f[0]), 10, 64); err == nil {
						c.Time = t
					}
				}
			}
		}
	}
	if !haveTree {
		return nil, errors.New("no tree line")
	}
	return c, nil
}

// parseTag returns an annotated tag's target.
func parseTag(data []byte) (ID, Type, error) {
	var id ID
	var t Type
	haveID := false
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			break
		}
		line := data[:nl]
		data = data[nl+1:]
		if len(line) == 0 {
			break
		}
		key, val, _ := bytes.Cut(line, []byte{' '})
		switch string(key) {
		case "object":
			var ok bool
			if id, ok = ParseID(string(val)); !ok {
				return id, 0, fmt.Errorf("bad object id %q", val)
			}
			haveID = true
		case "type":
			var ok bool
			if t, ok = parseType(string(val)); !ok {
				return id, 0, fmt.Errorf("bad type %q", val)
			}
		}
	}
	if !haveID || t == 0 {
		return id, 0, errors.New("no object or type line")
	}
	return id, t, nil
}

// TreeEntry is one entry of a tree.
type TreeEntry struct {
	Mode uint32 // octal as git writes it: 0o40000 tree, 0o100644, 0o100755, 0o120000, 0o160000
	Name string
	ID   ID
}

// IsTree reports whether the entry is a directory.
func (e TreeEntry) IsTree() bool { return e.Mode == 0o40000 }

// ParseTree reads a tree object's content: entries "MODE NAME\x00" + 20-byte id.
func ParseTree(data []byte) ([]TreeEntry, error) {
	var es []TreeEntry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp <= 0 || sp > 7 {
			return nil, errors.New("malformed tree entry mode")
		}
		mode, err := strconv.ParseUint(string(data[:sp]), 8, 32)
		if err != nil {
			return nil, fmt.Errorf("malformed tree entry mode %q", data[:sp])
		}
		data = data[sp+1:]
		nul := bytes.IndexByte(data, 0)
		if nul <= 0 {
			return nil, errors.New("malformed tree entry name")
		}
		name := string(data[:nul])
		data = data[nul+1:]
		if len(data) < 20 {
			return nil, errors.New("truncated tree entry id")
		}
		var id ID
		copy(id[:], data[:20])
		data = data[20:]
		es = append(es, TreeEntry{Mode: uint32(mode), Name: name, ID: id})
	}
	return es, nil
}

// applyDelta applies a git delta to base; the result is capped at max bytes.
func applyDelta(base, delta []byte, max int64) ([]byte, error) {
	src, delta, err := deltaVarint(delta)
	if err != nil {
		return nil, err
	}
	if src != uint64(len(base)) {
		return nil, fmt.Errorf("delta base is %d bytes, the delta expects %d", len(base), src)
	}
	dst, delta, err := deltaVarint(delta)
	if err != nil {
		return nil, err
	}
	if dst > u64(max) {
		return nil, &TooLargeError{What: "(delta result)", Size: dst, Max: max}
	}
	out := make([]byte, 0, dst)
	for len(delta) > 0 {
		op := delta[0]
		delta = delta[1:]
		switch {
		case op&0x80 != 0: // copy from base
			var off, n uint64
			for i := range 4 {
				if op&(1<<i) != 0 {
					if len(delta) == 0 {
						return nil, errors.New("truncated delta copy")
					}
					off |= uint64(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			for i := range 3 {
				if op&(0x10<<i) != 0 {
					if len(delta) == 0 {
						return nil, errors.New("truncated delta copy")
					}
					n |= uint64(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > uint64(len(base)) || uint64(len(out))+n > dst {
				return nil, errors.New("delta copy out of range")
			}
			out = append(out, base[off:off+n]...)
		case op != 0: // insert op bytes
			n := int(op)
			if n > len(delta) || u64(int64(len(out)+n)) > dst {
				return nil, errors.New("delta insert out of range")
			}
			out = append(out, delta[:n]...)
			delta = delta[n:]
		default:
			return nil, errors.New("reserved delta opcode 0")
		}
	}
	if uint64(len(out)) != dst {
		return nil, fmt.Errorf("delta result is %d bytes, the delta promised %d", len(out), dst)
	}
	return out, nil
}

// u64 is a non-negative size as uint64 (a negative one is 0).
func u64(n int64) uint64 {
	if n < 0 {
		return 0
	}
	return uint64(n)
}

func deltaVarint(b []byte) (uint64, []byte, error) {
	var v uint64
	for i := 0; ; i++ {
		if i >= len(b) || i > 9 {
			return 0, nil, errors.New("truncated delta header")
		}
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			return v, b[i+1:], nil
		}
	}
}

package input

import (
	"context"
	"errors"
	"io"
	"os"
	"reflect"
	"time"
)

// Open opens path for reading. Opening a named pipe waits for a writer: that
// wait ends with ctx.Err() when ctx ends first (the abandoned open closes its
// file once it completes).
func Open(ctx context.Context, path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil || st.Mode().IsRegular() || st.IsDir() || ctx.Done() == nil {
		return os.Open(path)
	}
	type res struct {
		f   *os.File
		err error
	}
	ch := make(chan res, 1)
	go func() {
		f, err := os.Open(path)
		ch <- res{f, err}
	}()
	select {
	case r := <-ch:
		return r.f, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.f != nil {
				r.f.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// ReadFile reads the whole file at path, at most max bytes, as os.ReadFile
// but opened with Open and read through Reader: a FIFO with no writer, or a
// silent one, ends the wait with ctx.Err() when ctx ends. A longer file (or
// an endless one: /dev/zero, a pipe that never ends) is an *Error read no
// further than max+1 bytes.
func ReadFile(ctx context.Context, path string, max int64) ([]byte, error) {
	f, err := Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(Reader(ctx, f), max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, Errorf(path, 0, "larger than %d bytes, the cap of this file", max)
	}
	return b, nil
}

// Reader returns r made interruptible by ctx: once ctx ends, a Read blocked on
// a pipe, a terminal or a socket returns ctx.Err() within moments, and every
// later Read too. A regular file (which never blocks for long) is returned as
// it is; a pollable *os.File (a pipe or FIFO opened by Open) gets a read
// deadline when ctx ends; any other reader is read by a helper goroutine, which
// stays blocked in its Read until the writer sends or closes (a command exits
// soon after, ending it).
func Reader(ctx context.Context, r io.Reader) io.Reader {
	if ctx.Done() == nil {
		return r
	}
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			return r
		}
		if f.SetReadDeadline(time.Time{}) == nil {
			stop := context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Unix(1, 0)) })
			return &deadlineReader{ctx: ctx, f: f, stop: stop}
		}
	}
	return &asyncReader{ctx: ctx, r: r}
}

type deadlineReader struct {
	ctx  context.Context
	f    *os.File
	stop func() bool
}

func (d *deadlineReader) Read(p []byte) (int, error) {
	if err := d.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := d.f.Read(p)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		if cerr := d.ctx.Err(); cerr != nil {
			return n, cerr
		}
	}
	if err == io.EOF {
		d.stop()
	}
	return n, err
}

type asyncReader struct {
	ctx    context.Context
	r      io.Reader
	buf    []byte
	result chan asyncResult
	err    error
}

type asyncResult struct {
	n   int
	err error
}

func (a *asyncReader) Read(p []byte) (int, error) {
	if a.err != nil {
		return 0, a.err
	}
	if err := a.ctx.Err(); err != nil {
		a.err = err
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if a.result == nil {
		a.result = make(chan asyncResult, 1)
	}
	if cap(a.buf) < len(p) {
		a.buf = make([]byte, len(p))
	}
	buf := a.buf[:len(p)]
	go func() {
		n, err := a.r.Read(buf)
		a.result <- asyncResult{n, err}
	}()
	select {
	case res := <-a.result:
		copy(p, buf[:res.n])
		return res.n, res.err
	case <-a.ctx.Done():
		// The helper still owns buf: never use it again.
		a.buf = nil
		a.err = a.ctx.Err()
		return 0, a.err
	}
}

// IsNil reports whether r is no reader: nil, or a nil pointer or function
// behind the interface (a nil *os.File or *bytes.Buffer), whose methods a
// read would call on nothing. A library entry point refuses it as an error
// rather than panicking.
func IsNil(r io.Reader) bool {
	if r == nil {
		return true
	}
	switch v := reflect.ValueOf(r); v.Kind() {
	case reflect.Pointer, reflect.Func:
		return v.IsNil()
	}
	return false
}

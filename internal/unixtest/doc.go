// Package unixtest holds, for tests, the few system calls the module's tests
// use that exist only on unix (named pipes, signal 0, a blocking pipe, a child's
// peak RSS): on unix it makes them, elsewhere it skips the test (or, for the
// pipe, gives os.Pipe, which blocks there too), so that `go vet` and the test
// build pass on every platform the binary is built for.
package unixtest

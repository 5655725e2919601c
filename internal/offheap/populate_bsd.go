//go:build darwin || freebsd

package offheap

// mapPopulate: these systems have no MAP_POPULATE; the pages fault in as
// they are first written.
const mapPopulate = 0

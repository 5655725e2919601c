package offheap

import "syscall"

// mapPopulate makes the kernel fault a mapping's pages in when it is made.
const mapPopulate = syscall.MAP_POPULATE

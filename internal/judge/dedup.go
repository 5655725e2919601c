package judge

import (
	"crypto/sha256"
	"strconv"
)

// Identical prompts are asked once (issue 33 item 11, issue 37 item 5). Two
// pairs of a pool whose query texts and document texts are equal (the same
// question asked under two query ids, a card repeated under two ids) make the
// same request and have the same cache key: a batch must not hold that
// request twice (the Batch APIs refuse a repeated custom_id, and the results
// would answer it twice), and online judging must not spend two requests, or
// race two workers, on it. So the first pair of the pool with a prompt owns
// it: only the owner is asked (or read from the cache), and its judgments are
// copied to every later pair with the same prompt, marked Reused (unless they
// were cache hits). What is sent, and so the qrels, is the same whichever way
// a pool is judged.

// promptOwners maps each pair to the index of the first pair of pairs with the
// same query and document text (itself when it is the first).
func promptOwners(pairs []Pair) []int {
	owner := make([]int, len(pairs))
	first := make(map[[32]byte]int, len(pairs))
	for i, p := range pairs {
		h := sha256.New()
		for _, s := range []string{p.Query, p.Document} {
			_, _ = h.Write([]byte(strconv.Itoa(len(s))))
			_, _ = h.Write([]byte{0})
			_, _ = h.Write([]byte(s))
		}
		var k [32]byte
		h.Sum(k[:0])
		if o, ok := first[k]; ok {
			owner[i] = o
			continue
		}
		first[k] = i
		owner[i] = i
	}
	return owner
}

// shareOwners copies each owner's judgments to the pairs that share its
// prompt: a copy is Reused unless it was a cache hit.
func (res *Result) shareOwners(owner []int) {
	for i, o := range owner {
		if o == i {
			continue
		}
		for rep, j := range res.Grades[o] {
			j.Reused = !j.Cached
			res.Grades[i][rep] = j
			if j.Cached {
				res.Cached++
			} else {
				res.Reused++
			}
		}
	}
}

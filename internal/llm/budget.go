package llm

import "context"

// Budget hands a request budget (judge's and generate's --max-requests) to
// tasks in their order, so that the result is the one a single worker gets,
// asking task after task until the budget is spent: a task may start only
// when the budget left by the tasks before it, counted at their most while
// they run and at what they spent once ended, still covers its most;
// otherwise Reserve waits for them to end. Without that order, which task the
// budget refused depended on which worker asked first. A nil *Budget (no
// budget) lets every task start at once.
//
// Reserve is called by the one goroutine that hands out the tasks, Spent by
// the workers.
type Budget struct {
	max           int64
	used, pending int64 // what the ended tasks spent; what the running ones may spend at most
	running       int
	reserved      []int64 // a running task's most, by task
	ended         chan spent
}

// spent is what a task took from the budget, once it ended.
type spent struct {
	task  int
	calls int64
}

// NewBudget is the budget of max requests for tasks numbered 0..tasks-1, nil
// when max is not positive (no budget).
func NewBudget(max int64, tasks int) *Budget {
	if max <= 0 {
		return nil
	}
	return &Budget{max: max, reserved: make([]int64, tasks), ended: make(chan spent, tasks)}
}

// Reserve waits until task (the next in order) may start: when no task runs,
// or when what the others spent and may spend plus most() (asked again after
// each task that ends: a task's most may change while they run) is within the
// budget. It reports false when ctx is done first.
func (b *Budget) Reserve(ctx context.Context, task int, most func() int64) bool {
	if b == nil {
		return true
	}
	for {
		m := most()
		if b.running == 0 || b.used+b.pending+m <= b.max {
			b.reserved[task] = m
			break
		}
		select {
		case e := <-b.ended:
			b.used, b.pending, b.running = b.used+e.calls, b.pending-b.reserved[e.task], b.running-1
		case <-ctx.Done():
			return false
		}
	}
	b.pending += b.reserved[task]
	b.running++
	return true
}

// Spent tells the budget that task ended having sent calls requests.
func (b *Budget) Spent(task int, calls int64) {
	if b != nil {
		b.ended <- spent{task, calls}
	}
}

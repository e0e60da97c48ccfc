package tape

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// Queue serialises work: one holder at a time, at most limit waiting; one more is refused at once
// with ErrQueueFull, so that an overloaded proxy answers 503 with Retry-After instead of piling
// up goroutines. Waiters are admitted in roughly arrival order (Go channel senders are queued
// first in, first out). A Tape serialises its own operations with one; a proxy that wants to
// serialise whole exchanges (upstream call and commit) creates its own with NewQueue.
type Queue struct {
	turn    chan struct{}
	waiting atomic.Int64
	limit   int64
}

// NewQueue returns a Queue that lets at most limit callers wait (limit < 0 counts as 0).
func NewQueue(limit int) *Queue {
	return &Queue{turn: make(chan struct{}, 1), limit: int64(max(limit, 0))}
}

// Acquire waits for the caller's turn and returns the function that ends it (safe to call more
// than once). It fails with ErrQueueFull when limit callers already wait, and with ctx's error
// when ctx ends first.
func (q *Queue) Acquire(ctx context.Context) (release func(), err error) {
	select {
	case q.turn <- struct{}{}:
		return q.releaser(), nil
	default:
	}
	if n := q.waiting.Add(1); n > q.limit {
		q.waiting.Add(-1)
		return nil, fmt.Errorf("%w: %d operations are already waiting (limit %d): retry later", ErrQueueFull, n-1, q.limit)
	}
	defer q.waiting.Add(-1)
	select {
	case q.turn <- struct{}{}:
		return q.releaser(), nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// Waiting is how many callers wait now.
func (q *Queue) Waiting() int { return int(q.waiting.Load()) }

func (q *Queue) releaser() func() {
	var once sync.Once
	return func() { once.Do(func() { <-q.turn }) }
}

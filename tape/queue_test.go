package tape

import (
	"context"
	"errors"
	"runtime"
	"testing"
)

func TestQueue(t *testing.T) {
	q := NewQueue(2)
	ctx := context.Background()
	release, err := q.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Two may wait; the third is refused at once.
	got := make(chan error, 2)
	order := make(chan int, 2)
	for i := range 2 {
		go func() {
			rel, err := q.Acquire(ctx)
			got <- err
			if err == nil {
				order <- i
				rel()
			}
		}()
		for q.Waiting() != i+1 { // Waiting counts the goroutine just before it blocks
			runtime.Gosched()
		}
	}
	if _, err := q.Acquire(ctx); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("third waiter: %v, want ErrQueueFull", err)
	}
	// A waiter whose context ends gives up its place.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := q.Acquire(cctx); !errors.Is(err, ErrQueueFull) && !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v", err)
	}
	release()
	release() // releasing twice is harmless
	for range 2 {
		if err := <-got; err != nil {
			t.Fatal(err)
		}
	}
	if q.Waiting() != 0 {
		t.Fatalf("Waiting = %d after all were served", q.Waiting())
	}
	// And the queue still works.
	rel, err := q.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rel()
}

func TestQueueCancelWhileWaiting(t *testing.T) {
	q := NewQueue(1)
	release, _ := q.Acquire(context.Background())
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := q.Acquire(ctx)
		done <- err
	}()
	for q.Waiting() != 1 {
		runtime.Gosched()
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

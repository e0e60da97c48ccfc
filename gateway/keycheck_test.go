package gateway

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A request that arrives while a check of its key is in flight does not take that check's
// answer, which may predate a revocation: it waits and gets a check that began after it arrived.
// Requests arriving together share one check.
func TestKeyChecksNeverTrustACheckBegunBefore(t *testing.T) {
	var k keyChecks
	var revoked atomic.Bool
	var calls atomic.Int32
	began, release := make(chan struct{}), make(chan struct{})
	check := func(context.Context, string) (string, error) {
		if calls.Add(1) == 1 {
			close(began)
			<-release // the first check is in flight while the key is revoked
			return "acme", nil
		}
		if revoked.Load() {
			return "", errors.New("revoked")
		}
		return "acme", nil
	}
	first := make(chan error, 1)
	go func() {
		_, err := k.check(context.Background(), "k", check)
		first <- err
	}()
	<-began
	revoked.Store(true)
	var wg sync.WaitGroup
	later := make([]error, 8)
	for i := range later {
		wg.Go(func() { _, later[i] = k.check(context.Background(), "k", check) })
	}
	// Release the first check once a later request waits for the next one (or, should none
	// ever wait, after a while: the later requests are then answered by the first check).
	for waiting, give := false, time.Now().Add(5*time.Second); !waiting && time.Now().Before(give); {
		k.mu.Lock()
		c := k.next["k"]
		waiting = c != nil && !c.begun
		k.mu.Unlock()
		runtime.Gosched()
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("the check begun before the revocation: %v; want its own answer, live", err)
	}
	wg.Wait()
	for i, err := range later {
		if err == nil {
			t.Fatalf("request %d arrived after the revocation and was answered live by a check begun before it", i)
		}
	}
	if n := calls.Load(); n < 2 || n > 9 {
		t.Fatalf("%d checks for 9 requests", n)
	}
}

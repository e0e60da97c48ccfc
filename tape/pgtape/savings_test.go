package pgtape

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
)

// Replicas adding to the fleet's receipt at once never lose each other's counts.
func TestUpdateSavingsConcurrently(t *testing.T) {
	ctx := context.Background()
	url, a := migrated(t)
	b := openStore(t, url, testKey)
	if got, err := a.Savings(ctx); got != nil || err != nil {
		t.Fatalf("no receipt yet: %q, %v", got, err)
	}
	add := func(cur []byte) ([]byte, error) {
		n := 0
		if cur != nil {
			var err error
			if n, err = strconv.Atoi(string(cur)); err != nil {
				return nil, err
			}
		}
		return []byte(strconv.Itoa(n + 1)), nil
	}
	var wg sync.WaitGroup
	for i := range 20 {
		s := []*Store{a, b}[i%2]
		wg.Go(func() {
			if err := s.UpdateSavings(ctx, add); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got, err := b.Savings(ctx); string(got) != "20" || err != nil {
		t.Fatalf("after 20 concurrent additions: %q, %v", got, err)
	}
	boom := errors.New("boom")
	if err := a.UpdateSavings(ctx, func([]byte) ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("a failing change: %v", err)
	}
	if got, _ := a.Savings(ctx); string(got) != "20" {
		t.Fatalf("a failing change changed the receipt to %q", got)
	}
}

package gateway

import (
	"context"
	"sync"
)

// keyChecks lets concurrent requests with one API key share a database round trip to check it,
// without ever trusting a check that began before the request arrived (a key revoked before a
// request arrived is refused at once): requests that arrive while a check is in flight wait for
// it to end and share the next one, which begins after all of them arrived.
type keyChecks struct {
	mu   sync.Mutex
	next map[string]*keyCheck // by key: the check requests arriving now will share
}

// keyCheck is one check of a key, shared by the requests that arrived before it began.
type keyCheck struct {
	begun  bool
	done   chan struct{}
	tenant string
	err    error
}

// check returns check(key)'s result from a check that began after this call did.
func (k *keyChecks) check(ctx context.Context, key string, check func(context.Context, string) (string, error)) (string, error) {
	k.mu.Lock()
	c := k.next[key]
	if c != nil && !c.begun {
		k.mu.Unlock()
		select {
		case <-c.done:
			return c.tenant, c.err
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	prev := c
	c = &keyCheck{done: make(chan struct{})}
	if k.next == nil {
		k.next = map[string]*keyCheck{}
	}
	k.next[key] = c
	k.mu.Unlock()
	if prev != nil {
		<-prev.done // meanwhile, requests that arrive join c
	}
	k.mu.Lock()
	c.begun = true
	k.mu.Unlock()
	// The requests sharing c wait for it: one leaving does not cancel it.
	c.tenant, c.err = check(context.WithoutCancel(ctx), key)
	close(c.done)
	k.mu.Lock()
	if k.next[key] == c {
		delete(k.next, key)
	}
	k.mu.Unlock()
	return c.tenant, c.err
}

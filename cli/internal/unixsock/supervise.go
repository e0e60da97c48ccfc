package unixsock

import (
	"context"
	"net"
	"time"
)

// checkEvery is how often Supervise asks whether the server should stop.
const checkEvery = 250 * time.Millisecond

// Supervise closes ln when ctx ends, which ends the server's Accept loop, and calls cancel as
// soon as over, asked every 250 ms, reports true: the socket file removed or replaced, the
// workspace gone, the idle period passed.
func Supervise(ctx context.Context, cancel context.CancelFunc, ln net.Listener, over func() bool) {
	go func() {
		tick := time.NewTicker(checkEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				ln.Close()
				return
			case <-tick.C:
				if over() {
					cancel()
				}
			}
		}
	}()
}

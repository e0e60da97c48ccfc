package tape_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"

	"github.com/agent-rewind/rewind/tape"
)

func Example() {
	dir, err := os.MkdirTemp("", "tape-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	// A real program leaves Options.Key nil, and the key comes from REWIND_STORAGE_KEY.
	key, _ := tape.ParseKey("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	t, err := tape.Open(ctx, tape.Options{Dir: dir, Tenant: "athena", Key: key})
	if err != nil {
		log.Fatal(err)
	}
	defer t.Close()

	// Record two calls in epoch trial-1.
	rec, err := t.Recorder("trial-1")
	if err != nil {
		log.Fatal(err)
	}
	ask := func(q string) tape.Request {
		return tape.Request{
			Method: "POST", Path: "/v1/messages",
			Header: http.Header{"Anthropic-Version": {"2023-06-01"}, "X-Api-Key": {"sk-not-stored"}},
			Body:   []byte(`{"model":"claude-x","messages":[{"role":"user","content":"` + q + `"}]}`),
		}
	}
	for i, q := range []string{"hello", "again"} {
		pos, err := rec.Record(ctx, tape.Call{
			Request:  ask(q),
			Response: tape.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: fmt.Appendf(nil, `{"answer":%d}`, i)},
		})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("recorded at position", pos)
	}
	rec.Close()

	// Replay them in order with cursor review-1. Property order does not matter.
	cur, err := t.Cursor("trial-1", "review-1")
	if err != nil {
		log.Fatal(err)
	}
	defer cur.Close()
	r, err := cur.Next(ctx, "call-1", ask("hello"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("position %d: %d %s\n", r.Position, r.Response.Status, r.Response.Body)

	// A retry of call-1 returns the same response without consuming a position.
	r, _ = cur.Next(ctx, "call-1", ask("hello"))
	fmt.Printf("retry: position %d, retried %v\n", r.Position, r.Retried)

	reordered := ask("again")
	reordered.Body = []byte(`{"messages":[{"content":"again","role":"user"}],"model":"claude-x"}`)
	r, err = cur.Next(ctx, "call-2", reordered)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("position %d: %d %s\n", r.Position, r.Response.Status, r.Response.Body)

	_, err = cur.Next(ctx, "call-3", ask("more"))
	fmt.Println(err)
	// Output:
	// recorded at position 0
	// recorded at position 1
	// position 0: 200 {"answer":0}
	// retry: position 0, retried true
	// position 1: 200 {"answer":1}
	// tape: cursor "review-1" (tenant "athena", epoch "trial-1") is at the end of the tape: all 2 recorded calls were replayed; record more calls in this epoch, or replay with a new cursor
}

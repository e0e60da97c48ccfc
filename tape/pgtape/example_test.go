package pgtape_test

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/agent-rewind/rewind/tape"
	"github.com/agent-rewind/rewind/tape/pgtape"
)

// Record a call through one replica and replay it through another. It needs
// REWIND_DATABASE_URL (a migrated database) and REWIND_DEPLOYMENT_KEY.
func Example() {
	ctx := context.Background()
	replicaA, err := pgtape.Open(ctx, pgtape.Options{URL: os.Getenv(pgtape.DatabaseURLEnv)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer replicaA.Close()
	t, err := replicaA.Tape(ctx, "acme")
	if err != nil {
		fmt.Println(err)
		return
	}
	rec, _ := t.Recorder("trial-1")
	req := tape.Request{Method: "POST", Path: "/v1/messages", Header: http.Header{"Anthropic-Version": {"2023-06-01"}}, Body: []byte(`{"q":1}`)}
	rec.Record(ctx, tape.Call{Request: req, Response: tape.Response{Status: 200, Body: []byte(`{"a":1}`)}})

	replicaB, _ := pgtape.Open(ctx, pgtape.Options{URL: os.Getenv(pgtape.DatabaseURLEnv)})
	defer replicaB.Close()
	tb, _ := replicaB.Tape(ctx, "acme")
	cur, _ := tb.Cursor("trial-1", "review")
	got, err := cur.Next(ctx, "", req)
	fmt.Println(got.Position, string(got.Response.Body), err)
}

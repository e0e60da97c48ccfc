package pgtape

import (
	"context"
	"crypto/rand"
	"net/http"
	"testing"

	"github.com/agent-rewind/rewind/tape"
	"github.com/agent-rewind/rewind/tape/pgtape/pgtest"
)

func testDatabase(t testing.TB) string { return pgtest.Database(t) }

var testKey = func() []byte { k := make([]byte, 32); rand.Read(k); return k }()

// openStore opens a Store (one "replica") on url with key, closed when t ends.
func openStore(t testing.TB, url string, key []byte) *Store {
	t.Helper()
	s, err := Open(context.Background(), Options{URL: url, DeploymentKey: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// migrated returns a migrated database and a Store on it.
func migrated(t testing.TB) (string, *Store) {
	t.Helper()
	url := testDatabase(t)
	s := openStore(t, url, testKey)
	if _, err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return url, s
}

func openTape(t testing.TB, s *Store, tenant string) *Tape {
	t.Helper()
	tp, err := s.Tape(context.Background(), tenant)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func call(body, answer string) tape.Call {
	return tape.Call{
		Request:  tape.Request{Method: "POST", Path: "/v1/messages", Header: http.Header{"Anthropic-Version": {"2023-06-01"}, "X-Api-Key": {"sk-secret"}}, Body: []byte(body)},
		Response: tape.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(answer)},
	}
}

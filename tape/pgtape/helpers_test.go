package pgtape

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/url"
	"os"
	"testing"

	"github.com/agent-rewind/rewind/tape"
	"github.com/jackc/pgx/v5"
)

// TestDatabaseEnv names the connection string of a PostgreSQL server the tests may create
// databases on (.ci/run starts a throwaway cluster and sets it).
const TestDatabaseEnv = "REWIND_TEST_DATABASE_URL"

// testDatabase creates an empty database for t on the server in REWIND_TEST_DATABASE_URL and
// returns its connection string; it drops the database when t ends. Without a server the test
// skips, except under REWIND_CI=1, where it fails.
func testDatabase(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(TestDatabaseEnv)
	if admin == "" {
		if os.Getenv("REWIND_CI") == "1" {
			t.Fatalf("%s is not set: CI must run the PostgreSQL tests (.ci/run starts a throwaway cluster)", TestDatabaseEnv)
		}
		t.Skipf("no PostgreSQL: set %s to a server's connection string (a superuser or a role that may CREATE DATABASE) to run this test", TestDatabaseEnv)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connect to %s: %v", Redact(admin), err)
	}
	defer conn.Close(ctx)
	var b [6]byte
	rand.Read(b[:])
	name := "rewind_test_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Errorf("connect to drop %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	return withDatabase(admin, name)
}

// withDatabase points a connection string (a URL or key=value pairs) at database name.
func withDatabase(conn, name string) string {
	if u, err := url.Parse(conn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + name
		return u.String()
	}
	return conn + " dbname=" + name // a later keyword wins
}

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

// Package pgtest gives tests a fresh PostgreSQL database on the server named by
// REWIND_TEST_DATABASE_URL (.ci/run starts a throwaway cluster and sets it). Without a server a
// test skips, saying how to run it, except under REWIND_CI=1, where it fails.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Env names the connection string of a server on which the tests may create databases.
const Env = "REWIND_TEST_DATABASE_URL"

// Server returns the server's connection string, or skips (fails under REWIND_CI=1).
func Server(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(Env)
	if admin == "" {
		if os.Getenv("REWIND_CI") == "1" {
			t.Fatalf("%s is not set: CI must run the PostgreSQL tests (.ci/run starts a throwaway cluster)", Env)
		}
		t.Skipf("no PostgreSQL: set %s to a server's connection string (a role that may CREATE DATABASE) to run this test", Env)
	}
	return admin
}

// Database creates an empty database for t and returns its connection string; the database is
// dropped when t ends.
func Database(t testing.TB) string {
	t.Helper()
	admin := Server(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connect to the test server (%s): %v", Env, err)
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
	return WithDatabase(admin, name)
}

// WithDatabase points a connection string (a URL or key=value pairs) at database name.
func WithDatabase(conn, name string) string {
	if u, err := url.Parse(conn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + name
		return u.String()
	}
	return conn + " dbname=" + name // a later keyword wins
}

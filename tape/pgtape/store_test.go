package pgtape

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/tape"
)

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:hunter2@db:5432/rewind":                  "postgres://u:xxxxx@db:5432/rewind",
		"postgres://u@db/rewind?password=hunter2&sslmode=none": "postgres://u@db/rewind?password=xxxxx&sslmode=none",
		"host=db user=u password=hunter2 dbname=rewind":        "host=db user=u password=xxxxx dbname=rewind",
		"host=db password='hun ter2' dbname=rewind":            "host=db password=xxxxx dbname=rewind",
		"postgres://u@db/rewind":                               "postgres://u@db/rewind",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOpenNeverPrintsThePassword(t *testing.T) {
	_, err := Open(context.Background(), Options{URL: "postgres://u:hunter2@127.0.0.1:1/x?connect_timeout=bad", DeploymentKey: testKey})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("a bad connection string: %v; want an error without the password", err)
	}
	t.Setenv(DeploymentKeyEnv, "")
	s, err := Open(context.Background(), Options{URL: "postgres://u@h/x"})
	if err != nil {
		t.Fatalf("no deployment key: %v; want a store for migrations and API keys", err)
	}
	defer s.Close()
	if _, err := s.Tape(context.Background(), "acme"); !errors.Is(err, tape.ErrKeyMissing) {
		t.Fatalf("a tape without a deployment key: %v; want ErrKeyMissing", err)
	}
	t.Setenv(DeploymentKeyEnv, "abc")
	if _, err := Open(context.Background(), Options{URL: "postgres://u@h/x"}); !errors.Is(err, tape.ErrKeyMalformed) {
		t.Fatalf("a malformed deployment key: %v; want ErrKeyMalformed", err)
	}
}

// A database that is down is a storage error (the gateway answers 503), never a hang or a
// success; a database that drops every connection (a restart) is used again without reopening.
func TestDatabaseDownAndBack(t *testing.T) {
	ctx := context.Background()
	down := openStore(t, "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2", testKey)
	if err := down.Ping(ctx); !errors.Is(err, tape.ErrStorage) {
		t.Fatalf("an unreachable database: %v; want ErrStorage", err)
	}

	url, s := migrated(t)
	tp := openTape(t, s, "acme")
	rec, _ := tp.Recorder("e")
	if _, err := rec.Record(ctx, call(`{"n":0}`, `{}`)); err != nil {
		t.Fatal(err)
	}
	// Terminate every connection to the test database, as a restart does.
	admin := openStore(t, url, testKey)
	if _, err := admin.pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	failures := 0
	for i := 1; i <= 5; i++ {
		_, err := rec.Record(ctx, call(fmt.Sprintf(`{"n":%d}`, i), `{}`))
		if err != nil {
			if !errors.Is(err, tape.ErrStorage) {
				t.Fatalf("record after a restart: %v; want ErrStorage or success", err)
			}
			failures++
		}
	}
	n, err := tp.Len(ctx, "e")
	if err != nil || n != int64(6-failures) {
		t.Fatalf("after the restart: %d calls (%v), %d failures; want every success recorded and nothing torn", n, err, failures)
	}
	if failures > 1 {
		t.Fatalf("%d calls failed after the restart; the pool should replace dead connections", failures)
	}
}

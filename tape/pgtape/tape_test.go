package pgtape

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/agent-rewind/rewind/tape"
)

func TestMigrateTwiceIsNoop(t *testing.T) {
	ctx := context.Background()
	url := testDatabase(t)
	s := openStore(t, url, testKey)
	if _, err := s.Tape(ctx, "acme"); !errors.Is(err, ErrMigrationsPending) {
		t.Fatalf("a replica on an unmigrated database: got %v, want ErrMigrationsPending (replicas never migrate)", err)
	}
	if err := s.CheckSchema(ctx); !errors.Is(err, ErrMigrationsPending) {
		t.Fatalf("CheckSchema before migrate: %v", err)
	}
	applied, err := s.Migrate(ctx)
	if err != nil || fmt.Sprint(applied) != "[1 2 3]" {
		t.Fatalf("first migrate: applied %v, %v; want [1 2 3]", applied, err)
	}
	applied, err = s.Migrate(ctx)
	if err != nil || len(applied) != 0 {
		t.Fatalf("second migrate: applied %v, %v; want none", applied, err)
	}
	if err := s.CheckSchema(ctx); err != nil {
		t.Fatal(err)
	}
	// A newer release's schema is refused, not used.
	if _, err := s.pool.Exec(ctx, `INSERT INTO rewind_schema_migrations (version, name) VALUES (99, 'future')`); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckSchema(ctx); !errors.Is(err, tape.ErrNewerFormat) {
		t.Fatalf("CheckSchema on a newer schema: %v", err)
	}
	if _, err := s.Migrate(ctx); !errors.Is(err, tape.ErrNewerFormat) {
		t.Fatalf("Migrate on a newer schema: %v", err)
	}
}

func TestConcurrentMigrators(t *testing.T) {
	url := testDatabase(t)
	var wg sync.WaitGroup
	results := make([][]int, 4)
	errs := make([]error, 4)
	for i := range 4 {
		s := openStore(t, url, testKey)
		wg.Go(func() { results[i], errs[i] = s.Migrate(context.Background()) })
	}
	wg.Wait()
	total := 0
	for i := range 4 {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		total += len(results[i])
	}
	if total != len(migrations) {
		t.Fatalf("4 concurrent migrators applied %d migrations in all (%v); want each once", total, results)
	}
}

// A call recorded through one replica is replayed through another, in order, with the tape's
// strict-miss, end-of-tape and request-id semantics.
func TestRecordOnOneReplicaReplayOnAnother(t *testing.T) {
	ctx := context.Background()
	url, a := migrated(t)
	b := openStore(t, url, testKey)
	rec, _ := openTape(t, a, "acme").Recorder("e1")
	for i := range 3 {
		pos, err := rec.Record(ctx, call(fmt.Sprintf(`{"n":%d}`, i), fmt.Sprintf(`{"answer":%d}`, i)))
		if err != nil || pos != int64(i) {
			t.Fatalf("record %d: position %d, %v", i, pos, err)
		}
	}
	cur, _ := openTape(t, b, "acme").Cursor("e1", "review")
	// Member order and whitespace do not matter (canonical JSON); the credential is not stored.
	got, err := cur.Next(ctx, "req-0", call(` { "n" : 0 }`, "").Request)
	if err != nil || got.Position != 0 || string(got.Response.Body) != `{"answer":0}` {
		t.Fatalf("Next 0: %+v, %v", got, err)
	}
	again, err := cur.Next(ctx, "req-0", call(`{"n":0}`, "").Request)
	if err != nil || !again.Retried || again.Position != 0 {
		t.Fatalf("retry of req-0: %+v, %v; want the same response, no position consumed", again, err)
	}
	var miss *tape.MissError
	if _, err := cur.Next(ctx, "", call(`{"n":7}`, "").Request); !errors.As(err, &miss) || miss.Position != 1 {
		t.Fatalf("a different request at position 1: %v; want a strict miss at 1", err)
	}
	if pos, _ := cur.Position(ctx); pos != 1 {
		t.Fatalf("after a miss the cursor is at %d; want 1 (it does not move)", pos)
	}
	for i := 1; i < 3; i++ {
		if got, err := cur.Next(ctx, "", call(fmt.Sprintf(`{"n":%d}`, i), "").Request); err != nil || got.Position != int64(i) {
			t.Fatalf("Next %d: %+v, %v", i, got, err)
		}
	}
	var end *tape.EndError
	if _, err := cur.Next(ctx, "", call(`{"n":3}`, "").Request); !errors.As(err, &end) || end.Position != 3 {
		t.Fatalf("past the end: %v", err)
	}
	// The cursor's position is shared: a handle on replica A continues where B stopped.
	if pos, err := func() (int64, error) { c, _ := openTape(t, a, "acme").Cursor("e1", "review"); return c.Position(ctx) }(); err != nil || pos != 3 {
		t.Fatalf("the cursor seen from replica A is at %d (%v); want 3", pos, err)
	}
	// The database holds no body in the clear.
	var leaks int
	if err := a.pool.QueryRow(ctx, `SELECT count(*) FROM rewind_records WHERE position(convert_to('answer', 'UTF8') in response) > 0 OR position(convert_to('sk-secret', 'UTF8') in request) > 0`).Scan(&leaks); err != nil || leaks != 0 {
		t.Fatalf("%d rows hold a body or a credential in the clear (%v)", leaks, err)
	}
}

// One epoch recorded through two replicas at once gets positions 0..n-1, each once; replayed
// through two replicas at once, each position is served once.
func TestConcurrentReplicasKeepOrder(t *testing.T) {
	ctx := context.Background()
	url, a := migrated(t)
	b := openStore(t, url, testKey)
	replicas := []*Tape{openTape(t, a, "acme"), openTape(t, b, "acme")}
	const n = 40
	positions := make([]int64, n)
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		rec, _ := replicas[i%2].Recorder("shared")
		wg.Go(func() {
			// The same request each time: identical calls are distinct occurrences.
			pos, err := rec.Record(ctx, call(`{"q":"same"}`, fmt.Sprintf(`{"i":%d}`, i)))
			positions[i] = pos
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	sorted := append([]int64(nil), positions...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	for i, p := range sorted {
		if p != int64(i) {
			t.Fatalf("positions %v: want 0..%d each once", sorted, n-1)
		}
	}
	// Which answer each position holds, to check replay serves it in order.
	answerAt := map[int64]string{}
	for i, p := range positions {
		answerAt[p] = fmt.Sprintf(`{"i":%d}`, i)
	}
	served := make([]int64, n)
	errs = make(chan error, n)
	for i := range n {
		cur, _ := replicas[i%2].Cursor("shared", "replay")
		wg.Go(func() {
			got, err := cur.Next(ctx, fmt.Sprintf("id-%d", i), call(`{"q":"same"}`, "").Request)
			if err != nil {
				errs <- err
				return
			}
			if string(got.Response.Body) != answerAt[got.Position] {
				errs <- fmt.Errorf("position %d served %s, recorded %s", got.Position, got.Response.Body, answerAt[got.Position])
			}
			served[i] = got.Position
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	sort.Slice(served, func(i, j int) bool { return served[i] < served[j] })
	for i, p := range served {
		if p != int64(i) {
			t.Fatalf("served positions %v: want 0..%d each once (none lost or duplicated)", served, n-1)
		}
	}
}

func TestWrongDeploymentKeyFailsVisibly(t *testing.T) {
	ctx := context.Background()
	url, a := migrated(t)
	tp := openTape(t, a, "acme")
	if err := tp.Store(ctx, []byte("k1"), []byte("v1")); err != nil {
		t.Fatal(err)
	}
	other := make([]byte, 32)
	copy(other, testKey)
	other[0] ^= 1
	if _, err := openStore(t, url, other).Tape(ctx, "acme"); !errors.Is(err, tape.ErrWrongKey) {
		t.Fatalf("another deployment key: %v; want ErrWrongKey", err)
	}
}

// Tenant A can never read or replay tenant B's records: its key differs, and a row moved from B
// to A does not authenticate.
func TestTenantIsolation(t *testing.T) {
	ctx := context.Background()
	_, s := migrated(t)
	ta, tb := openTape(t, s, "tenant-a"), openTape(t, s, "tenant-b")
	if err := tb.Store(ctx, []byte("key"), []byte("b's answer")); err != nil {
		t.Fatal(err)
	}
	if _, found, err := ta.Lookup(ctx, []byte("key")); found || err != nil {
		t.Fatalf("tenant A looked up B's key: found %v, %v", found, err)
	}
	rec, _ := tb.Recorder("e")
	if _, err := rec.Record(ctx, call(`{"x":1}`, `{"secret":"b"}`)); err != nil {
		t.Fatal(err)
	}
	cur, _ := ta.Cursor("e", "c")
	if _, err := cur.Next(ctx, "", call(`{"x":1}`, "").Request); !errors.Is(err, tape.ErrEndOfTape) {
		t.Fatalf("tenant A replaying epoch e: %v; want end of tape (A has no records)", err)
	}
	// Move B's rows to A, as someone with write access to the database could.
	for _, q := range []string{`UPDATE rewind_replay SET tenant = 'tenant-a' WHERE tenant = 'tenant-b'`, `UPDATE rewind_records SET tenant = 'tenant-a' WHERE tenant = 'tenant-b'`} {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := ta.Lookup(ctx, []byte("key")); !errors.Is(err, tape.ErrTampered) {
		t.Fatalf("B's replay value moved to A: %v; want ErrTampered", err)
	}
	if _, err := cur.Next(ctx, "", call(`{"x":1}`, "").Request); !errors.Is(err, tape.ErrTampered) {
		t.Fatalf("B's record moved to A: %v; want ErrTampered", err)
	}
}

func TestCorruptRowsFailVisibly(t *testing.T) {
	ctx := context.Background()
	_, s := migrated(t)
	tp := openTape(t, s, "acme")
	rec, _ := tp.Recorder("e")
	for i := range 3 {
		if _, err := rec.Record(ctx, call(fmt.Sprintf(`{"n":%d}`, i), `{"ok":true}`)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.pool.Exec(ctx, `UPDATE rewind_records SET response = set_byte(response, 20, get_byte(response, 20) # 1) WHERE position = 0`); err != nil {
		t.Fatal(err)
	}
	cur, _ := tp.Cursor("e", "c")
	if _, err := cur.Next(ctx, "", call(`{"n":0}`, "").Request); !errors.Is(err, tape.ErrTampered) {
		t.Fatalf("a flipped response byte: %v; want ErrTampered", err)
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO rewind_cursors (tenant, epoch, name, position, mac) VALUES ('acme', 'e', 'c', 1, '\x00')`); err != nil {
		t.Fatal(err)
	}
	if _, err := cur.Next(ctx, "", call(`{"n":1}`, "").Request); !errors.Is(err, tape.ErrTampered) {
		t.Fatalf("a cursor row set by hand: %v; want ErrTampered", err)
	}
	if err := tp.Store(ctx, []byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE rewind_replay SET value = set_byte(value, 13, get_byte(value, 13) # 1)`); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tp.Lookup(ctx, []byte("k")); !errors.Is(err, tape.ErrTampered) {
		t.Fatalf("a flipped replay byte: %v; want ErrTampered (never a silent miss)", err)
	}
}

func TestMissingPositionIsCorrupt(t *testing.T) {
	ctx := context.Background()
	_, s := migrated(t)
	tp := openTape(t, s, "acme")
	rec, _ := tp.Recorder("e")
	for i := range 3 {
		if _, err := rec.Record(ctx, call(fmt.Sprintf(`{"n":%d}`, i), `{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM rewind_records WHERE position = 0`); err != nil {
		t.Fatal(err)
	}
	cur, _ := tp.Cursor("e", "c")
	if _, err := cur.Next(ctx, "", call(`{"n":0}`, "").Request); !errors.Is(err, tape.ErrCorrupt) {
		t.Fatalf("a deleted position before the last: %v; want ErrCorrupt", err)
	}
}

// A record whose insert fails takes nothing: its transaction (the position's increment
// included) rolls back, the next record gets the same position, and the pool goes on serving.
func TestFailedRecordLeavesNoGap(t *testing.T) {
	ctx := context.Background()
	_, s := migrated(t)
	tp := openTape(t, s, "acme")
	rec, _ := tp.Recorder("e")
	if _, err := rec.Record(ctx, call(`{"n":0}`, `{}`)); err != nil {
		t.Fatal(err)
	}
	// A row already at position 1 makes the next record's insert fail.
	if _, err := s.pool.Exec(ctx, `INSERT INTO rewind_records (tenant, epoch, position, request_tag, response, request)
		SELECT tenant, epoch, 1, request_tag, response, request FROM rewind_records WHERE position = 0`); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Record(ctx, call(`{"n":1}`, `{}`)); !errors.Is(err, tape.ErrConflict) {
		t.Fatalf("a record whose position is taken: %v; want ErrConflict", err)
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM rewind_records WHERE position = 1`); err != nil {
		t.Fatal(err)
	}
	for want := int64(1); want <= 2; want++ {
		pos, err := rec.Record(ctx, call(fmt.Sprintf(`{"n":%d}`, want), `{}`))
		if err != nil || pos != want {
			t.Fatalf("after the failure: position %d, %v; want %d (no gap)", pos, err, want)
		}
	}
}

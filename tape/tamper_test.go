package tape

import (
	"context"
	"errors"
	"testing"
)

// TestTamperingIsDetected alters the database at the SQL level, as someone with write access to
// the file but not the key could, and checks that replay and Verify report it instead of serving
// a wrong answer.
func TestTamperingIsDetected(t *testing.T) {
	for _, tc := range []struct {
		name string
		sql  string
		// replayErr is what replaying calls 0 and 1 in order with cursor "c" reports.
		replayErr, verifyErr error
	}{
		{"responses swapped between positions",
			`UPDATE records SET response = CASE position WHEN 0 THEN (SELECT response FROM records WHERE position = 1) ELSE (SELECT response FROM records WHERE position = 0) END WHERE epoch = 'e1' AND position IN (0, 1)`,
			ErrTampered, ErrTampered},
		{"requests swapped between positions",
			`UPDATE records SET request = CASE position WHEN 0 THEN (SELECT request FROM records WHERE position = 1) ELSE (SELECT request FROM records WHERE position = 0) END WHERE epoch = 'e1' AND position IN (0, 1)`,
			nil, ErrTampered}, // replay reads responses only; they still match their tags
		{"whole rows swapped (positions renumbered)",
			`UPDATE records SET position = CASE position WHEN 0 THEN 1 ELSE 0 END + 100 WHERE epoch = 'e1' AND position IN (0, 1); UPDATE records SET position = position - 100 WHERE position >= 100`,
			ErrTampered, ErrTampered},
		{"tags swapped with their rows' responses",
			`UPDATE records SET (request_tag, response) = (SELECT r.request_tag, r.response FROM records r WHERE r.epoch = 'e1' AND r.position = 1 - records.position) WHERE epoch = 'e1' AND position IN (0, 1)`,
			ErrTampered, ErrTampered},
		{"record moved to another epoch",
			`UPDATE records SET epoch = 'e9' WHERE epoch = 'e1' AND position = 0; UPDATE records SET epoch = 'e1' WHERE epoch = 'e2' AND position = 0`,
			ErrTampered, ErrTampered},
		{"request tag replaced",
			`UPDATE records SET request_tag = zeroblob(32) WHERE epoch = 'e1' AND position = 0`,
			ErrTampered, ErrTampered},
		{"response truncated",
			`UPDATE records SET response = substr(response, 1, length(response) - 1) WHERE epoch = 'e1' AND position = 1`,
			ErrTampered, ErrTampered},
		{"middle record deleted",
			`DELETE FROM records WHERE epoch = 'e1' AND position = 1`,
			ErrCorrupt, ErrCorrupt},
		{"cursor position moved",
			`UPDATE cursors SET position = 1`,
			ErrTampered, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tp := openTest(t, dir)
			recordN(t, tp, "e1", 3)
			recordN(t, tp, "e2", 1)
			cur, _ := tp.Cursor("e1", "c")
			if _, err := cur.Position(context.Background()); err != nil {
				t.Fatal(err)
			}
			// Give the cursor a stored row, at position 0, so that it can be altered.
			tp.inTx(func() error {
				return tp.exec(sqlSetCursor, "e1", "c", int64(0), tp.seal.cursorMAC("e1", "c", 0))
			})
			tp.Close()

			db := rawDB(t, tp.Path())
			if err := db.Exec(tc.sql); err != nil {
				t.Fatalf("%s: %v", tc.sql, err)
			}
			db.Close()

			tp = openTest(t, dir)
			cur, err := tp.Cursor("e1", "c")
			if err != nil {
				t.Fatal(err)
			}
			var replayErr error
			for i := range 2 {
				got, err := cur.Next(context.Background(), "", req(i))
				if err != nil {
					replayErr = err
					break
				}
				wantServed(t, got, nil, i) // whatever is served must be the right answer
			}
			checkErr(t, "replay", replayErr, tc.replayErr)
			_, err = tp.Verify(context.Background(), "e1")
			checkErr(t, "Verify", err, tc.verifyErr)
		})
	}
}

func checkErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("%s: %v, want success", what, err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("%s: %v, want %v", what, err, want)
	}
}

func TestRequestIDRowTampering(t *testing.T) {
	dir := t.TempDir()
	tp := openTest(t, dir)
	recordN(t, tp, "e1", 2)
	cur, _ := tp.Cursor("e1", "c")
	for i := range 2 {
		got, err := cur.Next(context.Background(), "id-"+string(rune('a'+i)), req(i))
		wantServed(t, got, err, i)
	}
	tp.Close()
	db := rawDB(t, tp.Path())
	// Point id-a at position 1, whose response belongs to another request.
	if err := db.Exec(`UPDATE cursor_requests SET position = 1 WHERE request_id = 'id-a'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	tp = openTest(t, dir)
	cur, _ = tp.Cursor("e1", "c")
	_, err := cur.Next(context.Background(), "id-a", req(0))
	if !errors.Is(err, ErrTampered) {
		t.Fatalf("got %v, want ErrTampered", err)
	}
}

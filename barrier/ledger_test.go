package barrier

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 5, 2, 10, 14, 3, 0, time.UTC)

func newLedger(t *testing.T) (*Ledger, *memRecorder) {
	t.Helper()
	rec := &memRecorder{}
	l, err := Open(filepath.Join(t.TempDir(), ".rewind", "effects"), rec)
	if err != nil {
		t.Fatal(err)
	}
	now := t0
	l.Now = func() time.Time { now = now.Add(time.Second); return now }
	return l, rec
}

func mustAdmit(t *testing.T, l *Ledger, req Request) Decision {
	t.Helper()
	d, err := l.Admit(req)
	if err != nil {
		t.Fatalf("Admit(%q): %v", req.Key, err)
	}
	if !d.Admitted || d.Code != CodeAdmitted {
		t.Fatalf("Admit(%q) = %+v, want admitted", req.Key, d)
	}
	return d
}

func charge(amount int) Request {
	return Request{
		Key:         "invoice-42-charge",
		Payload:     json.RawMessage(`{"customer":"cus_1","amount":` + itoa(amount) + `}`),
		Description: "charge invoice 42",
		Checkpoint:  "cp-7",
		Source:      "mcp",
		NewKeyHint:  "call guard_effect with a new key",
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestOpenNeedsRecorderAndDir(t *testing.T) {
	if _, err := Open(t.TempDir(), nil); !errors.Is(err, ErrNoRecorder) {
		t.Errorf("Open without a Recorder: %v, want ErrNoRecorder", err)
	}
	if _, err := Open("", &memRecorder{}); err == nil {
		t.Error("Open with no directory succeeded")
	}
}

func TestOpenDoesNoIO(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "effects")
	l, err := Open(dir, &memRecorder{})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := l.Confirm("toolu_none", "test"); err != nil || d.Code != CodeUntracked {
		t.Fatalf("Confirm on an empty ledger = %+v, %v; want untracked", d, err)
	}
	if recs, err := l.List(); err != nil || len(recs) != 0 {
		t.Fatalf("List on an empty ledger = %v, %v", recs, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lookups created the ledger directory: %v", err)
	}
}

func TestAdmitNewKeySpentAtOnce(t *testing.T) {
	l, rec := newLedger(t)
	d := mustAdmit(t, l, charge(100))
	if d.State != Spent || seqOf(d) != 0 || d.Record.Seq != 0 || d.Record.Generation != 1 {
		t.Fatalf("decision %+v record %+v: want spent, seq 0 (the first chain entry), generation 1", d, d.Record)
	}
	r, err := l.Get("invoice-42-charge")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Fingerprint([]byte(`{"amount":100,"customer":"cus_1"}`))
	if r.Fingerprint != want || r.Checkpoint != "cp-7" || r.Source != "mcp" || r.State != Spent || r.Seq != 0 {
		t.Errorf("stored record %+v", r)
	}
	if len(r.History) != 1 || r.History[0].To != Spent || r.History[0].Seq != 0 || r.History[0].From != "" {
		t.Errorf("history %+v", r.History)
	}
	if got := rec.kinds(); strings.Join(got, ",") != "effect" {
		t.Errorf("recorded %v, want one effect", got)
	}
	var e EffectEntry
	json.Unmarshal(rec.entries[0].Data, &e)
	if e.Key != "invoice-42-charge" || e.State != Spent || e.Fingerprint != want || e.Checkpoint != "cp-7" || e.Source != "mcp" {
		t.Errorf("effect entry %+v", e)
	}
}

func TestSpentSamePayloadRefused(t *testing.T) {
	l, rec := newLedger(t)
	mustAdmit(t, l, charge(100))
	retry := charge(100)
	retry.Checkpoint = "cp-9"
	d, err := l.Admit(retry)
	if err != nil {
		t.Fatal(err)
	}
	if d.Admitted || !d.Refused() || d.Code != CodeSpent || d.State != Spent || seqOf(d) != 1 {
		t.Fatalf("retry = %+v, want refused spent at seq 1", d)
	}
	for _, want := range []string{
		"invoice-42-charge",              // names the key
		"2026-05-02T10:14:04Z",           // when it fired
		"(chain entry 0)",                // where it is on the chain
		"checkpoint cp-7 was current",    // the checkpoint current at admission
		"does not undo external effects", // why a rewind does not help
		"new key",                        // what to do
		"call guard_effect with a new key",
	} {
		if !strings.Contains(d.Reason, want) {
			t.Errorf("reason lacks %q:\n%s", want, d.Reason)
		}
	}
	var re RefusalEntry
	json.Unmarshal(rec.entries[1].Data, &re)
	if rec.entries[1].Kind != KindRefusal || re.Code != CodeSpent || re.AdmissionSeq != 0 || re.Checkpoint != "cp-9" || re.Reason != d.Reason {
		t.Errorf("refusal entry %s %+v", rec.entries[1].Kind, re)
	}
}

func TestPayloadMismatchRefused(t *testing.T) {
	l, _ := newLedger(t)
	mustAdmit(t, l, charge(100))
	d, err := l.Admit(charge(250))
	if err != nil {
		t.Fatal(err)
	}
	if d.Admitted || d.Code != CodePayloadMismatch || d.State != Spent {
		t.Fatalf("other payload = %+v, want payload_mismatch", d)
	}
	for _, want := range []string{"different payload", "reusing it with other parameters", "new key"} {
		if !strings.Contains(d.Reason, want) {
			t.Errorf("reason lacks %q:\n%s", want, d.Reason)
		}
	}
	// Same JSON value written differently is the same payload.
	same := charge(100)
	same.Payload = json.RawMessage(`{ "amount" : 1e2, "customer" : "cus_1" }`)
	if d, _ := l.Admit(same); d.Code != CodeSpent {
		t.Errorf("reformatted payload = %s, want spent", d.Code)
	}
}

func pendingReq(id string) Request {
	r := charge(100)
	r.ToolUseID = id
	r.Confirmable = true
	r.Source = "hook:claude-code"
	return r
}

func TestPendingConfirmFailRelease(t *testing.T) {
	t.Run("confirm", func(t *testing.T) {
		l, rec := newLedger(t)
		d := mustAdmit(t, l, pendingReq("toolu_1"))
		if d.State != Pending {
			t.Fatalf("state %s, want pending", d.State)
		}
		refused, _ := l.Admit(pendingReq("toolu_2"))
		if refused.Code != CodePending || !strings.Contains(refused.Reason, "outcome is unknown") || !strings.Contains(refused.Reason, "agent-rewind release invoice-42-charge --reason") {
			t.Fatalf("while pending: %+v", refused)
		}
		c, err := l.Confirm("toolu_1", "hook:claude-code PostToolUse")
		if err != nil || c.Code != CodeConfirmed || c.State != Spent {
			t.Fatalf("Confirm = %+v, %v", c, err)
		}
		if again, _ := l.Confirm("toolu_1", "x"); again.Code != CodeUntracked {
			t.Errorf("second Confirm = %s, want untracked (index removed)", again.Code)
		}
		if d, _ := l.Admit(pendingReq("toolu_3")); d.Code != CodeSpent {
			t.Errorf("after confirm: %s, want spent", d.Code)
		}
		if got := strings.Join(rec.kinds(), ","); got != "effect,refusal,confirm,refusal" {
			t.Errorf("recorded %s", got)
		}
		var ce ConfirmEntry
		json.Unmarshal(rec.entries[2].Data, &ce)
		if ce.AdmissionSeq != 0 || ce.ToolUseID != "toolu_1" || ce.By != "hook:claude-code PostToolUse" {
			t.Errorf("confirm entry %+v", ce)
		}
	})
	t.Run("fail", func(t *testing.T) {
		l, rec := newLedger(t)
		mustAdmit(t, l, pendingReq("toolu_1"))
		f, err := l.Fail("toolu_1", "Exit code 1\nerror: failed to push", false, "hook:claude-code PostToolUseFailure")
		if err != nil || f.Code != CodeMarked || f.State != Failed {
			t.Fatalf("Fail = %+v, %v", f, err)
		}
		d, _ := l.Admit(pendingReq("toolu_2"))
		if d.Code != CodeFailed || !strings.Contains(d.Reason, "failed (Exit code 1 error: failed to push)") || !strings.Contains(d.Reason, "agent-rewind release") {
			t.Fatalf("after failure: %+v", d)
		}
		if got := strings.Join(rec.kinds(), ","); got != "effect,failure,refusal" {
			t.Errorf("recorded %s", got)
		}
	})
	t.Run("permission denied releases", func(t *testing.T) {
		l, rec := newLedger(t)
		mustAdmit(t, l, pendingReq("toolu_1"))
		r, err := l.ReleaseToolUse("toolu_1", "denied by auto mode", "hook:claude-code PermissionDenied")
		if err != nil || r.Code != CodeReleased || r.State != Released {
			t.Fatalf("ReleaseToolUse = %+v, %v", r, err)
		}
		d := mustAdmit(t, l, pendingReq("toolu_2"))
		if d.Record.Generation != 2 || len(d.Record.History) != 3 {
			t.Errorf("re-admission record %+v", d.Record)
		}
		if got := strings.Join(rec.kinds(), ","); got != "effect,release,effect" {
			t.Errorf("recorded %s", got)
		}
	})
	t.Run("report for another generation is ignored", func(t *testing.T) {
		l, _ := newLedger(t)
		mustAdmit(t, l, pendingReq("toolu_1"))
		if _, err := l.Release("invoice-42-charge", "checked: never happened", "cli"); err != nil {
			t.Fatal(err)
		}
		mustAdmit(t, l, pendingReq("toolu_2"))
		// A late PostToolUse of the first call must not confirm the second one.
		if d, _ := l.Confirm("toolu_1", "late"); d.Code != CodeUntracked {
			t.Errorf("late confirm = %+v", d)
		}
		if r, _ := l.Get("invoice-42-charge"); r.State != Pending || r.ToolUseID != "toolu_2" {
			t.Errorf("record after late confirm %+v", r)
		}
	})
}

func TestDuplicateHookOnOneCall(t *testing.T) {
	l, rec := newLedger(t)
	mustAdmit(t, l, pendingReq("toolu_1"))
	d, err := l.Admit(pendingReq("toolu_1"))
	if err != nil || !d.Admitted || d.Code != CodeDuplicate {
		t.Fatalf("second hook on the same call = %+v, %v; want duplicate", d, err)
	}
	if got := strings.Join(rec.kinds(), ","); got != "effect" {
		t.Errorf("recorded %s, want the admission only", got)
	}
}

func TestReleaseRearms(t *testing.T) {
	l, rec := newLedger(t)
	mustAdmit(t, l, charge(100))
	if _, err := l.Release("invoice-42-charge", "  ", "cli"); !errors.Is(err, ErrReasonRequired) {
		t.Errorf("release without reason: %v", err)
	}
	if _, err := l.Release("no-such-key", "x", "cli"); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("release of unknown key: %v", err)
	}
	r, err := l.Release("invoice-42-charge", "refunded by support, charge again", "cli")
	if err != nil || r.Code != CodeReleased || seqOf(r) != 1 {
		t.Fatalf("Release = %+v, %v", r, err)
	}
	if again, err := l.Release("invoice-42-charge", "again", "cli"); err != nil || again.Code != CodeUnchanged {
		t.Errorf("second release = %+v, %v", again, err)
	}
	d := mustAdmit(t, l, charge(250)) // a released key takes any payload: it is a new generation
	if d.Record.Generation != 2 || seqOf(d) != 2 {
		t.Errorf("re-admission %+v", d.Record)
	}
	hist := d.Record.History
	if len(hist) != 3 || hist[1].To != Released || hist[1].Reason != "refunded by support, charge again" || hist[2].From != Released {
		t.Errorf("history %+v", hist)
	}
	if got := strings.Join(rec.kinds(), ","); got != "effect,release,effect" {
		t.Errorf("recorded %s", got)
	}
}

func TestAdmissionNotRecordedIsUndone(t *testing.T) {
	l, rec := newLedger(t)
	rec.fail = errors.New("chain is read-only")
	if _, err := l.Admit(charge(100)); !errors.Is(err, ErrNotRecorded) {
		t.Fatalf("Admit with a failing Recorder: %v, want ErrNotRecorded", err)
	}
	if _, err := l.Get("invoice-42-charge"); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("the unrecorded admission left a record: %v", err)
	}
	rec.fail = nil
	mustAdmit(t, l, charge(100))

	// A released key whose re-admission cannot be recorded goes back to released.
	if _, err := l.Release("invoice-42-charge", "ok", "cli"); err != nil {
		t.Fatal(err)
	}
	rec.fail = errors.New("disk full")
	if _, err := l.Admit(charge(100)); !errors.Is(err, ErrNotRecorded) {
		t.Fatalf("re-admission: %v", err)
	}
	if r, _ := l.Get("invoice-42-charge"); r.State != Released {
		t.Errorf("state after failed re-admission: %s, want released", r.State)
	}
}

func TestRefusalNotRecordedStillRefuses(t *testing.T) {
	l, rec := newLedger(t)
	mustAdmit(t, l, charge(100))
	rec.fail = errors.New("chain locked")
	d, err := l.Admit(charge(100))
	if !errors.Is(err, ErrNotRecorded) || !d.Refused() || d.Code != CodeSpent {
		t.Fatalf("= %+v, %v; want a refusal and ErrNotRecorded", d, err)
	}
}

func TestTransitionNotRecordedChangesNothing(t *testing.T) {
	l, rec := newLedger(t)
	mustAdmit(t, l, pendingReq("toolu_1"))
	rec.fail = errors.New("chain locked")
	if _, err := l.Confirm("toolu_1", "x"); !errors.Is(err, ErrNotRecorded) {
		t.Fatalf("Confirm: %v", err)
	}
	if r, _ := l.Get("invoice-42-charge"); r.State != Pending {
		t.Errorf("state %s, want still pending", r.State)
	}
}

func TestInvalidKeysAndPayloads(t *testing.T) {
	l, _ := newLedger(t)
	for _, key := range []string{"", strings.Repeat("k", MaxKeyLen+1), "a\nb", "bad\xff"} {
		if _, err := l.Admit(Request{Key: key}); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("key %q: %v, want ErrInvalidKey", key, err)
		}
	}
	if _, err := l.Admit(Request{Key: "k", Payload: json.RawMessage(`{"a":1,"a":2}`)}); !errors.Is(err, ErrNotCanonicalizable) {
		t.Errorf("duplicate member: %v", err)
	}
	if _, err := l.Admit(Request{Key: "k", Payload: json.RawMessage(`{"a":`)}); !errors.Is(err, ErrNotCanonicalizable) {
		t.Errorf("broken JSON: %v", err)
	}
}

func TestCorruptRecordFailsVisibly(t *testing.T) {
	l, _ := newLedger(t)
	mustAdmit(t, l, charge(100))
	if err := os.WriteFile(l.keyPath("invoice-42-charge"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Admit(charge(100)); !errors.Is(err, ErrCorruptLedger) {
		t.Errorf("Admit on a corrupt record: %v", err)
	}
	if _, err := l.List(); !errors.Is(err, ErrCorruptLedger) {
		t.Errorf("List: %v", err)
	}
	newer, _ := json.Marshal(Record{Format: RecordFormat + 1, Key: "invoice-42-charge", State: Spent})
	os.WriteFile(l.keyPath("invoice-42-charge"), newer, 0o600)
	if _, err := l.Get("invoice-42-charge"); !errors.Is(err, ErrNewerFormat) {
		t.Errorf("Get of a newer record: %v", err)
	}
}

func TestListSortedAndIgnoresTemporaries(t *testing.T) {
	l, _ := newLedger(t)
	for _, k := range []string{"b", "a", "c"} {
		mustAdmit(t, l, Request{Key: k})
	}
	os.WriteFile(filepath.Join(l.Dir(), keysDir, ".tmp-123"), []byte("partial"), 0o600)
	recs, err := l.List()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range recs {
		keys = append(keys, r.Key)
	}
	if strings.Join(keys, ",") != "b,a,c" {
		t.Errorf("List order %v, want admission order b,a,c", keys)
	}
}

func TestDecisionString(t *testing.T) {
	for _, c := range []struct {
		d    Decision
		want string
	}{
		{Decision{}, "no decision"},
		{Decision{Code: CodeSpent, Key: "k"}, `refused "k" (spent)`},
		{Decision{Admitted: true, Code: CodeAdmitted, Key: "k", State: Pending}, `admitted "k" (pending)`},
		{Decision{Admitted: true, Code: CodeNotEffect}, "not_effect"},
	} {
		if got := c.d.String(); got != c.want {
			t.Errorf("%+v.String() = %q, want %q", c.d, got, c.want)
		}
	}
}

// TestGoroutinesRaceOnOneKey races separate Ledger values (separate lock descriptors, as
// separate processes have) in one process, under the race detector.
func TestGoroutinesRaceOnOneKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "effects")
	rec := &memRecorder{}
	const n = 8
	codes := make(chan Code, n)
	start := make(chan struct{})
	for i := range n {
		go func() {
			l, err := Open(dir, rec)
			if err != nil {
				t.Error(err)
				codes <- ""
				return
			}
			<-start
			d, err := l.Admit(Request{Key: "k", Payload: json.RawMessage(`{"i":1}`), ToolUseID: "t" + itoa(i), Confirmable: true})
			if err != nil {
				t.Error(err)
			}
			codes <- d.Code
		}()
	}
	close(start)
	count := map[Code]int{}
	for range n {
		count[<-codes]++
	}
	if count[CodeAdmitted] != 1 || count[CodePending] != n-1 {
		t.Fatalf("codes %v, want 1 admitted and %d pending refusals", count, n-1)
	}
	if k := rec.kinds(); k[0] != KindEffect || len(k) != n {
		t.Errorf("recorded %v", k)
	}
}

// seqOf is the chain seq a decision recorded, or -1 when it recorded none.
func seqOf(d Decision) int64 {
	if d.Seq == nil {
		return -1
	}
	return *d.Seq
}

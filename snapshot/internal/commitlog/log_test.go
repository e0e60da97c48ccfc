package commitlog

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

const bootA, bootB = "11111111-2222-3333-4444-555555555555", "66666666-7777-8888-9999-000000000000"

func rec(names ...string) Record {
	var r Record
	for _, n := range names {
		r.Files = append(r.Files, File{Name: n, Data: []byte("content of " + n)})
	}
	return r
}

func TestAppendReopenRecords(t *testing.T) {
	name := filepath.Join(t.TempDir(), "log")
	l, err := Open(name, bootA)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Empty() || l.Boot() != bootA {
		t.Fatalf("new log: empty %v boot %q", l.Empty(), l.Boot())
	}
	want := []Record{rec("packs/a.pack", "position"), rec("checkpoints/b", "position"), {Files: []File{{Name: "x", Data: []byte{}}}}}
	for _, r := range want {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	// Opened in another boot, the header still names the boot that wrote the records.
	l, err = Open(name, bootB)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Boot() != bootA {
		t.Errorf("boot %q, want the writer's %q", l.Boot(), bootA)
	}
	got, err := l.Records()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		for j := range want[i].Files {
			want[i].Files[j].Data = append([]byte{}, want[i].Files[j].Data...) // nil and empty alike
		}
		for j := range got[i].Files {
			got[i].Files[j].Data = append([]byte{}, got[i].Files[j].Data...)
		}
		if !reflect.DeepEqual(want[i], got[i]) {
			t.Errorf("record %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	last, ok, err := l.Last()
	if err != nil || !ok || len(last.Files) != 1 || last.Files[0].Name != "x" {
		t.Errorf("Last = %v, %v, %v", last, ok, err)
	}
	if err := l.Reset(bootB); err != nil {
		t.Fatal(err)
	}
	if got, _ := l.Records(); len(got) != 0 || !l.Empty() || l.Boot() != bootB {
		t.Errorf("after Reset: %d records, boot %q", len(got), l.Boot())
	}
}

// A record cut anywhere (its writer killed before the sync returned) is not returned, and the
// next record follows the last committed one.
func TestTornRecordIsDropped(t *testing.T) {
	full, err := Encode(rec("a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	for cut := 1; cut < len(full); cut += 3 {
		name := filepath.Join(t.TempDir(), "log")
		l, err := Open(name, bootA)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Append(rec("first")); err != nil {
			t.Fatal(err)
		}
		l.Close()
		f, _ := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
		f.Write(full[:cut])
		f.Close()
		if l, err = Open(name, bootA); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := l.Last(); !ok {
			t.Fatalf("cut at %d: the committed record before the torn one is not last", cut)
		}
		if err := l.Append(rec("third")); err != nil {
			t.Fatal(err)
		}
		got, _ := l.Records()
		l.Close()
		if len(got) != 2 || got[0].Files[0].Name != "first" || got[1].Files[0].Name != "third" {
			t.Fatalf("cut at %d: records %v", cut, got)
		}
	}
}

func TestBadHeaderIsRefused(t *testing.T) {
	name := filepath.Join(t.TempDir(), "log")
	os.WriteFile(name, []byte("something else entirely, long enough to be a header here\n"), 0o600)
	if _, err := Open(name, bootA); err == nil {
		t.Fatal("a file that is not a commit log opened")
	}
}

func TestNamesMustBeClean(t *testing.T) {
	for _, n := range []string{"", "/abs", "../up", "a/../b", `a\b`, "a//b"} {
		if _, err := Encode(Record{Files: []File{{Name: n}}}); err == nil {
			t.Errorf("name %q encoded", n)
		}
	}
}

func FuzzDecode(f *testing.F) {
	b, _ := Encode(rec("packs/a.pack", "position"))
	f.Add(b)
	f.Add([]byte("REC1\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, n, err := Decode(b)
		if err != nil {
			return
		}
		again, err := Encode(r)
		if err != nil || string(again) != string(b[:n]) {
			t.Fatalf("decoded %v does not encode back to its bytes", r)
		}
	})
}

func TestHeaderBoot(t *testing.T) {
	name := filepath.Join(t.TempDir(), "log")
	if b, err := HeaderBoot(name); b != "" || err != nil {
		t.Fatalf("missing log: %q, %v", b, err)
	}
	l, _ := Open(name, bootA)
	if b, err := HeaderBoot(name); b != "" || err != nil {
		t.Fatalf("empty log: %q, %v (want \"\": nothing to replay)", b, err)
	}
	l.Append(rec("a"))
	l.Close()
	if b, err := HeaderBoot(name); b != bootA || err != nil {
		t.Fatalf("log with a record: %q, %v", b, err)
	}
}

func TestLastEndsWith(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "log"), bootA)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	pos := func(s string) File { return File{Name: "position", Data: []byte(s)} }
	if ok, err := l.LastEndsWith(pos("p1")); ok || err != nil {
		t.Errorf("empty log: %v, %v", ok, err)
	}
	for _, p := range []string{"p1", "p2"} {
		if err := l.Append(Record{Files: []File{{Name: "packs/a.pack", Data: make([]byte, 1000)}, pos(p)}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		f    File
		want bool
	}{{pos("p2"), true}, {pos("p1"), false}, {pos("2"), false}, {pos("xp2"), false}, {File{Name: "posit", Data: []byte("p2")}, false}, {pos(string(make([]byte, 5000))), false}} {
		if ok, err := l.LastEndsWith(c.f); ok != c.want || err != nil {
			t.Errorf("LastEndsWith(%q %q) = %v, %v; want %v", c.f.Name, c.f.Data, ok, err, c.want)
		}
	}
}

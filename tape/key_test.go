package tape

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ncruces/go-sqlite3"
)

func TestKeyFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		unset       bool
		want        error
	}{
		{name: "unset", unset: true, want: ErrKeyMissing},
		{name: "empty", value: "", want: ErrKeyMissing},
		{name: "short", value: testKeyHex[:63], want: ErrKeyMalformed},
		{name: "long", value: testKeyHex + "00", want: ErrKeyMalformed},
		{name: "not hex", value: "zz" + testKeyHex[2:], want: ErrKeyMalformed},
		{name: "spaces", value: " " + testKeyHex[1:], want: ErrKeyMalformed},
		{name: "upper case", value: strings.ToUpper(testKeyHex)},
		{name: "ok", value: testKeyHex},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(KeyEnv, tc.value)
			if tc.unset {
				os.Unsetenv(KeyEnv)
			}
			k, err := KeyFromEnv()
			if tc.want == nil {
				if err != nil || string(k) != string(testKey) {
					t.Fatalf("KeyFromEnv = %x, %v", k, err)
				}
				return
			}
			wantErr(t, err, tc.want)
			if tc.value != "" && strings.Contains(err.Error(), tc.value[:20]) {
				t.Fatalf("error reveals the key: %v", err)
			}
		})
	}
}

func TestOpenMissingKey(t *testing.T) {
	t.Setenv(KeyEnv, "")
	os.Unsetenv(KeyEnv)
	dir := t.TempDir()
	_, err := Open(context.Background(), Options{Dir: dir, Tenant: "acme"})
	wantErr(t, err, ErrKeyMissing)
	// No fallback, no half-made store: nothing was created.
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a failed open left %v in the storage directory", entries)
	}
}

func TestOpenMalformedKey(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(context.Background(), Options{Dir: dir, Tenant: "acme", Key: testKey[:31]})
	wantErr(t, err, ErrKeyMalformed)

	t.Setenv(KeyEnv, testKeyHex[:10])
	_, err = Open(context.Background(), Options{Dir: dir, Tenant: "acme"})
	wantErr(t, err, ErrKeyMalformed)
}

func TestOpenFromEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(KeyEnv, testKeyHex)
	tp, err := Open(context.Background(), Options{Dir: dir, Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	recordN(t, tp, "e1", 1)
	tp.Close()
	// The same key given as Options.Key opens the same store.
	tp = openTest(t, dir)
	if n, err := tp.Verify(context.Background(), "e1"); err != nil || n != 1 {
		t.Fatalf("Verify = %d, %v", n, err)
	}
}

func TestOpenWrongKey(t *testing.T) {
	dir := t.TempDir()
	tp := openTest(t, dir)
	recordN(t, tp, "e1", 2)
	tp.Close()

	other := mustKey(strings.Repeat("ab", 32))
	_, err := Open(context.Background(), Options{Dir: dir, Tenant: "acme", Key: other})
	wantErr(t, err, ErrWrongKey)
	if !strings.Contains(err.Error(), KeyEnv) {
		t.Errorf("wrong-key error does not say what to set: %v", err)
	}
	// The right key still works: a wrong key changed nothing.
	tp = openTest(t, dir)
	if n, err := tp.Verify(context.Background(), "e1"); err != nil || n != 2 {
		t.Fatalf("Verify = %d, %v", n, err)
	}
}

// rawDB opens a tape's database directly, as an attacker or a faulty tool would.
func rawDB(t testing.TB, path string) *sqlite3.Conn {
	t.Helper()
	db, err := sqlite3.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestOpenCorruptMeta(t *testing.T) {
	for _, tc := range []struct {
		name, sql string
		want      error
	}{
		{"key check altered", `UPDATE meta SET key_check = zeroblob(60)`, ErrCorrupt},
		{"key id altered", `UPDATE meta SET key_id = zeroblob(16)`, ErrCorrupt},
		{"both altered", `UPDATE meta SET key_id = zeroblob(16), key_check = zeroblob(60)`, ErrWrongKey}, // indistinguishable from another key
		{"row deleted", `DELETE FROM meta`, ErrCorrupt},
		{"tenant altered", `UPDATE meta SET tenant = 'other'`, ErrCorrupt},
		{"newer version", `PRAGMA user_version = 2`, ErrNewerFormat},
		{"version zero", `PRAGMA user_version = 0`, ErrCorrupt},
		{"other application", `PRAGMA application_id = 7`, ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tp := openTest(t, dir)
			recordN(t, tp, "e1", 1)
			tp.Close()
			db := rawDB(t, tp.Path())
			if err := db.Exec(tc.sql); err != nil {
				t.Fatal(err)
			}
			db.Close()
			_, err := Open(context.Background(), Options{Dir: dir, Tenant: "acme", Key: testKey})
			wantErr(t, err, tc.want)
		})
	}
}

func TestOpenNotATape(t *testing.T) {
	t.Run("garbage", func(t *testing.T) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "acme"), 0o700)
		os.WriteFile(filepath.Join(dir, "acme", DatabaseName), []byte(strings.Repeat("not a database ", 1000)), 0o600)
		_, err := Open(context.Background(), Options{Dir: dir, Tenant: "acme", Key: testKey})
		wantErr(t, err, ErrCorrupt)
	})
	t.Run("other sqlite database", func(t *testing.T) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "acme"), 0o700)
		db := rawDB(t, filepath.Join(dir, "acme", DatabaseName))
		db.Exec(`CREATE TABLE t (x)`)
		db.Close()
		_, err := Open(context.Background(), Options{Dir: dir, Tenant: "acme", Key: testKey})
		wantErr(t, err, ErrCorrupt)
	})
	t.Run("another tenant's database", func(t *testing.T) {
		dir := t.TempDir()
		tp := openTest(t, dir)
		tp.Close()
		os.MkdirAll(filepath.Join(dir, "bolt"), 0o700)
		data, _ := os.ReadFile(tp.Path())
		os.WriteFile(filepath.Join(dir, "bolt", DatabaseName), data, 0o600)
		_, err := Open(context.Background(), Options{Dir: dir, Tenant: "bolt", Key: testKey})
		wantErr(t, err, ErrCorrupt)
	})
}

func TestEncryptedAtRest(t *testing.T) {
	dir := t.TempDir()
	tp := openTest(t, dir)
	recordN(t, tp, "e1", 3)
	tp.Close()
	var all []byte
	files, _ := filepath.Glob(filepath.Join(dir, "acme", "*"))
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && !fi.IsDir() {
			b, _ := os.ReadFile(f)
			all = append(all, b...)
		}
	}
	for _, secret := range []string{"plaintext-prompt-", "plaintext-answer-", "sk-ant-secret-credential", "claude-test", "2023-06-01", "req_1"} {
		if strings.Contains(string(all), secret) {
			t.Errorf("%q is stored in plaintext under %s", secret, dir)
		}
	}
}

func TestAnswerHeadersRefuseCredentials(t *testing.T) {
	_, err := Open(context.Background(), Options{Dir: t.TempDir(), Tenant: "acme", Key: testKey, AnswerHeaders: []string{"anthropic-version", "x-api-key"}})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "X-Api-Key") {
		t.Fatalf("got %v, want ErrInvalid naming X-Api-Key", err)
	}
}

package tape

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ncruces/go-sqlite3"
)

// Benchmarks: durable records per second and replays per second for 4 KiB and 256 KiB bodies,
// each beside the real alternative in the same run: the same SQLite settings (WAL,
// synchronous=FULL, one immediate transaction per operation) storing plaintext blobs, with no
// canonicalisation, hashing, sealing or cursor bookkeeping. The ratio is the tape's own cost.

var benchSizes = []struct {
	name string
	size int
}{{"4KiB", 4 << 10}, {"256KiB", 256 << 10}}

// benchCall is a call with a JSON request body and an SSE-like response body of about size
// bytes each; n makes it distinct.
func benchCall(n, size int) Call {
	prefix := fmt.Sprintf(`{"model":"claude-bench","max_tokens":1024,"messages":[{"role":"user","content":"%d `, n)
	body := prefix + strings.Repeat("x", max(size-len(prefix)-4, 0)) + `"}]}`
	stream := strings.Repeat("event: content_block_delta\ndata: {\"delta\":{\"text\":\"hello\"}}\n\n", size/32+1)[:size]
	return Call{
		Request:  Request{Method: "POST", Path: "/v1/messages", Header: http.Header{"Anthropic-Version": {"2023-06-01"}}, Body: []byte(body)},
		Response: Response{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(stream)},
	}
}

func BenchmarkRecord(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			tp := openTest(b, b.TempDir())
			r, err := tp.Recorder("bench")
			if err != nil {
				b.Fatal(err)
			}
			c := benchCall(0, sz.size)
			ctx := context.Background()
			b.SetBytes(int64(len(c.Request.Body) + len(c.Response.Body)))
			b.ResetTimer()
			for b.Loop() {
				if _, err := r.Record(ctx, c); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

func BenchmarkReplay(b *testing.B) {
	const recorded = 64
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			tp := openTest(b, b.TempDir())
			r, _ := tp.Recorder("bench")
			calls := make([]Call, recorded)
			for i := range calls {
				calls[i] = benchCall(i, sz.size)
				if _, err := r.Record(context.Background(), calls[i]); err != nil {
					b.Fatal(err)
				}
			}
			ctx := context.Background()
			b.SetBytes(int64(len(calls[0].Request.Body) + len(calls[0].Response.Body)))
			var cur *Cursor
			n := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%recorded == 0 { // a fresh cursor each time the tape runs out
					b.StopTimer()
					if cur != nil {
						cur.Close()
					}
					cur, _ = tp.Cursor("bench", fmt.Sprint("c", n))
					n++
					b.StartTimer()
				}
				if _, err := cur.Next(ctx, fmt.Sprint("id-", i), calls[i%recorded].Request); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "replays/s")
		})
	}
}

// plainDB is the alternative: the same SQLite configuration, plaintext blobs.
func plainDB(b *testing.B) *sqlite3.Conn {
	db, err := sqlite3.Open(filepath.Join(b.TempDir(), "plain.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	for _, q := range []string{"PRAGMA journal_mode = WAL", "PRAGMA synchronous = FULL",
		"CREATE TABLE records (id INTEGER PRIMARY KEY, epoch TEXT, position INTEGER, response BLOB, request BLOB, UNIQUE (epoch, position))",
		"CREATE TABLE cursors (epoch TEXT, name TEXT, position INTEGER, PRIMARY KEY (epoch, name)) WITHOUT ROWID"} {
		if err := db.Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	return db
}

func BenchmarkPlainSQLiteRecord(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			db := plainDB(b)
			ins, _, err := db.Prepare("INSERT INTO records (epoch, position, response, request) VALUES ('bench', (SELECT COALESCE(MAX(position) + 1, 0) FROM records WHERE epoch = 'bench'), ?, ?)")
			if err != nil {
				b.Fatal(err)
			}
			defer ins.Close()
			c := benchCall(0, sz.size)
			b.SetBytes(int64(len(c.Request.Body) + len(c.Response.Body)))
			b.ResetTimer()
			for b.Loop() {
				db.Exec("BEGIN IMMEDIATE")
				ins.BindBlob(1, c.Response.Body)
				ins.BindBlob(2, c.Request.Body)
				if err := ins.Exec(); err != nil {
					b.Fatal(err)
				}
				if err := db.Exec("COMMIT"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

func BenchmarkPlainSQLiteReplay(b *testing.B) {
	const recorded = 64
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			db := plainDB(b)
			c := benchCall(0, sz.size)
			ins, _, _ := db.Prepare("INSERT INTO records (epoch, position, response, request) VALUES ('bench', ?, ?, ?)")
			for i := range recorded {
				ins.BindInt(1, i)
				ins.BindBlob(2, c.Response.Body)
				ins.BindBlob(3, c.Request.Body)
				if err := ins.Exec(); err != nil {
					b.Fatal(err)
				}
			}
			ins.Close()
			sel, _, _ := db.Prepare("SELECT response FROM records WHERE epoch = 'bench' AND position = ?")
			upd, _, _ := db.Prepare("INSERT INTO cursors VALUES ('bench', 'c', ?) ON CONFLICT DO UPDATE SET position = excluded.position")
			defer sel.Close()
			defer upd.Close()
			b.SetBytes(int64(len(c.Request.Body) + len(c.Response.Body)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				db.Exec("BEGIN IMMEDIATE")
				sel.BindInt(1, i%recorded)
				if !sel.Step() {
					b.Fatal(sel.Err())
				}
				body := sel.ColumnBlob(0, nil)
				sel.Reset()
				if len(body) != len(c.Response.Body) {
					b.Fatal("short read")
				}
				upd.BindInt(1, i%recorded+1)
				if err := upd.Exec(); err != nil {
					b.Fatal(err)
				}
				if err := db.Exec("COMMIT"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "replays/s")
		})
	}
}

// BenchmarkRequestHash is the CPU cost a replay adds before it touches the database: canonical
// JSON and SHA-256 of the request. It is independent of the disk, so it is the stable figure on
// a busy machine.
func BenchmarkRequestHash(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			r := benchCall(0, sz.size).Request
			b.SetBytes(int64(len(r.Body)))
			for b.Loop() {
				RequestHash(r, DefaultAnswerHeaders)
			}
		})
	}
}

// BenchmarkSeal is the CPU cost of sealing and opening one body.
func BenchmarkSeal(b *testing.B) {
	k, _ := deriveKeys(testKey)
	s, _ := newSealer(k, "acme")
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			body := make([]byte, sz.size)
			ad := s.ad("bench", 1, kindResponse, make([]byte, 32))
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, ok := s.open(s.seal(body, ad), ad); !ok {
					b.Fatal("open")
				}
			}
		})
	}
}

package hashchain

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// benchData is a typical entry's data: a checkpoint summary.
func benchData(i int) map[string]any {
	return map[string]any{"id": fmt.Sprintf("cp-%07d", i), "files": i % 5000, "bytes": i * 37, "changed": []string{"src/main.go", "go.sum"}, "note": "after tool call bash"}
}

// BenchmarkAppendDurable measures appends that are durable when they return: one write and
// fsync of the line, the sidecar's fsync, and the anchor's durable replace.
func BenchmarkAppendDurable(b *testing.B) {
	tc := newTestChain(b)
	c := tc.open(b)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; b.Loop(); i++ {
		if _, err := c.Append("checkpoint", benchData(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
	reportCPU(b, cpu0)
}

// BenchmarkAppendSyncLater measures appends whose sidecar and anchor are left to a group
// commit (Options.SyncLater) that runs the newest flush every 100 ms in the background, as the
// guard server's does: on the path, one write and fsync of the line and the sidecar's write.
func BenchmarkAppendSyncLater(b *testing.B) {
	tc := newTestChain(b)
	var mu sync.Mutex
	var pending func() error
	flush := func() {
		mu.Lock()
		f := pending
		pending = nil
		mu.Unlock()
		if f != nil {
			if err := f(); err != nil {
				b.Error(err)
			}
		}
	}
	c, err := Open(tc.path, Options{Create: true, Anchor: tc.anchor, SyncLater: func(_ string, f func() error) {
		mu.Lock()
		pending = f
		mu.Unlock()
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				flush()
			case <-stop:
				return
			}
		}
	}()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; b.Loop(); i++ {
		if _, err := c.Append("checkpoint", benchData(i)); err != nil {
			b.Fatal(err)
		}
	}
	close(stop)
	<-done
	flush()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
	reportCPU(b, cpu0)
}

// BenchmarkAppendNoAnchor is the same without an anchor, to show what the anchor costs.
func BenchmarkAppendNoAnchor(b *testing.B) {
	tc := newTestChain(b)
	c, err := Open(tc.path, Options{Create: true})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	cpu0 := cpuTime()
	for i := 0; b.Loop(); i++ {
		if _, err := c.Append("checkpoint", benchData(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
	reportCPU(b, cpu0)
}

// reportCPU reports the process's CPU time (user and system) per operation since cpu0: on a
// shared machine wall time mostly measures the neighbours.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

var (
	bigChainOnce sync.Once
	bigChainDir  string
	bigChainErr  error
)

// bigChain writes a chain of n entries (and its sidecar) straight through the encoder, once per
// benchmark run, in a temporary directory that TestMain removes when the run ends.
func bigChain(b *testing.B, n int) string {
	bigChainOnce.Do(func() {
		bigChainDir, bigChainErr = os.MkdirTemp("", "hashchain-bench-")
		if bigChainErr != nil {
			return
		}
		path := filepath.Join(bigChainDir, "chain.jsonl")
		f, err := os.Create(path)
		if err != nil {
			bigChainErr = err
			return
		}
		tf, _ := os.Create(sidecarPath(path))
		s := &sidecar{f: tf}
		w, _ := s.writer()
		bw := bufio.NewWriterSize(f, 1<<20)
		var prev [32]byte
		t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		for i := range n {
			data, _ := canonicalData(benchData(i))
			line, h := encodeEntry(int64(i), t0.Add(time.Duration(i)*time.Millisecond).Format(time.RFC3339Nano), "checkpoint", data, prev)
			bw.Write(line)
			bw.WriteByte('\n')
			w.add(h)
			prev = h
		}
		bigChainErr = bw.Flush()
		w.finish()
		f.Close()
		tf.Close()
	})
	if bigChainErr != nil {
		b.Fatal(bigChainErr)
	}
	return filepath.Join(bigChainDir, "chain.jsonl")
}

// BenchmarkVerify1M verifies a 1,000,000-entry chain and its sidecar, as "agent-rewind chain
// verify" does (the goal: under 2 s on a 2-core machine).
func BenchmarkVerify1M(b *testing.B) {
	path := bigChain(b, 1_000_000)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		rep, err := VerifyFile(path, VerifyOptions{})
		if err != nil || rep.Size != 1_000_000 || rep.SidecarLeaves != 1_000_000 {
			b.Fatalf("%+v %v", rep, err)
		}
	}
	b.ReportMetric(1e6*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	// CPU seconds per verify, user and system, all threads: on a shared machine wall time
	// mostly measures the neighbours.
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}

// BenchmarkSHA256Only1M reads the same 1M-entry chain and SHA-256s it whole: the floor any
// integrity check of the file pays, to compare BenchmarkVerify1M with (run both together).
func BenchmarkSHA256Only1M(b *testing.B) {
	path := bigChain(b, 1_000_000)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ResetTimer()
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		h := sha256.New()
		if _, err := io.Copy(h, bufio.NewReaderSize(f, 1<<20)); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// BenchmarkOpenAppend opens a 1,000-entry chain, appends one entry and closes it: what the chain
// costs one agent-rewind command that records. The open checks the chain's tail, its stamp (the
// first open, without one, verifies the chain whole) and its anchor.
func BenchmarkOpenAppend(b *testing.B) {
	tc := newTestChain(b)
	c := tc.open(b)
	for i := range 1000 {
		if _, err := c.Append("checkpoint", benchData(i)); err != nil {
			b.Fatal(err)
		}
	}
	c.Close()
	cpu0 := cpuTime()
	for i := 0; b.Loop(); i++ {
		c, err := Open(tc.path, Options{Anchor: tc.anchor})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Append("checkpoint", benchData(i)); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
	reportCPU(b, cpu0)
}

// BenchmarkStampWork is the work the stamp adds to each append, alone: fstat the chain, encode
// the stamp, write it in place (restamp); and to each open, read and check it (readStamp).
// Compare with BenchmarkAppendDurable, run together.
func BenchmarkStampWork(b *testing.B) {
	tc := newTestChain(b)
	c := tc.open(b)
	fill(b, c, 10)
	cpu0 := cpuTime()
	for b.Loop() {
		c.restamp()
		if s, ok := readStamp(c.stampf); !ok || s.N != 10 {
			b.Fatalf("stamp %+v %v", s, ok)
		}
	}
	reportCPU(b, cpu0)
}

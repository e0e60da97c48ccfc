package snapshot

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/snapshot/internal/upkeep"
)

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkMaintenance measures what automatic maintenance is for, in one run (-benchtime=1x;
// REWIND_BENCH_FILES sets the workspace's size, 2,000 files by default): after 400 automatic
// checkpoints of one changed file each (400 small packs), the CPU time of a checkpoint of 10
// changed files, with a watcher's hint and with a full walk, on that store and on a copy whose
// packs maintenance merged, alternated (medians of 15 rounds); how long maintenance held the
// lock at once, merging and applying the retention (the newest 100 of the session: the calls
// are all of a few seconds, which the default week would keep); and the store's size before
// and after the retention.
func BenchmarkMaintenance(b *testing.B) {
	for b.Loop() {
		root, _ := benchTree(b)
		files := benchFileList(b, root, 10)
		stateA := filepath.Join(b.TempDir(), "a")
		a := mustOpen(b, root, Options{StateDir: stateA})
		first, err := a.Checkpoint(ctx, "first")
		if err != nil {
			b.Fatal(err)
		}
		cur := first.ID
		size0 := dirSize(b, stateA)
		for i := range 400 {
			f := files[i%len(files)]
			os.WriteFile(f, fmt.Appendf(nil, "call %d\n", i), 0o644)
			rel, _ := filepath.Rel(root, f)
			c, err := a.AutoCheckpoint(ctx, ToolCall{ID: fmt.Sprintf("toolu_%03d", i), Tool: "Bash", Session: "s1"}, &Changed{Since: cur, Paths: []string{filepath.ToSlash(rel)}})
			if err != nil {
				b.Fatal(err)
			}
			cur = c.ID
		}
		stateB := filepath.Join(b.TempDir(), "b")
		if out, err := exec.Command("cp", "-a", stateA, stateB).CombinedOutput(); err != nil {
			b.Fatalf("cp: %v %s", err, out)
		}
		bs := mustOpen(b, root, Options{StateDir: stateB})
		packsBefore := packCount(b, bs)
		t0, c0 := time.Now(), cpuTime()
		merge, err := bs.Maintain(ctx, MaintainOptions{})
		mergeWall, mergeCPU := time.Since(t0), cpuTime()-c0
		if err != nil || merge.Skipped != "" {
			b.Fatalf("maintain: %+v %v", merge, err)
		}
		b.Logf("merge: %d packs -> %d in %d batches; lock held at most %v at once; %v wall (%v of it the gaps between batches), %v CPU",
			packsBefore, packCount(b, bs), merge.Batches, merge.MaxHoldExact, mergeWall, time.Duration(merge.Batches)*batchGap, mergeCPU)
		// Alternated rounds: the same 10 changes checkpointed in each store.
		var hinted, walked [2][]time.Duration
		for round := range 15 {
			for k, s := range []*Store{a, bs} {
				for _, full := range []bool{false, true} {
					for _, f := range files {
						os.WriteFile(f, fmt.Appendf(nil, "round %d %v of %s\n", round, full, f), 0o644)
					}
					backdateIndex(b, s)
					pos, err := s.Current()
					if err != nil {
						b.Fatal(err)
					}
					var hint *Changed
					if !full {
						hint = &Changed{Since: pos}
						for _, f := range files {
							rel, _ := filepath.Rel(root, f)
							hint.Paths = append(hint.Paths, filepath.ToSlash(rel))
						}
					}
					c0 := cpuTime()
					c, err := s.CheckpointChanged(ctx, "ten", hint)
					d := cpuTime() - c0
					if err != nil || c.Hashed != 10 {
						b.Fatalf("checkpoint: %v, hashed %d", err, c.Hashed)
					}
					if full {
						walked[k] = append(walked[k], d)
					} else {
						hinted[k] = append(hinted[k], d)
					}
				}
			}
		}
		b.Logf("10-change checkpoint CPU, medians of 15: hinted %v with ~400 packs vs %v merged (%.2fx); full walk %v vs %v (%.2fx)",
			median(hinted[0]), median(hinted[1]), float64(median(hinted[0]))/float64(median(hinted[1])),
			median(walked[0]), median(walked[1]), float64(median(walked[0]))/float64(median(walked[1])))
		b.ReportMetric(float64(median(hinted[0]))/1e6, "hinted-cpu-ms-400packs")
		b.ReportMetric(float64(median(hinted[1]))/1e6, "hinted-cpu-ms-merged")
		b.ReportMetric(float64(median(walked[0]))/1e6, "walk-cpu-ms-400packs")
		b.ReportMetric(float64(median(walked[1]))/1e6, "walk-cpu-ms-merged")
		b.ReportMetric(float64(merge.MaxHoldExact)/1e6, "merge-maxhold-ms")
		// The retention, on the merged store.
		sizeA, sizeB := dirSize(b, stateA), dirSize(b, stateB)
		t0, c0 = time.Now(), cpuTime()
		ret, err := bs.Maintain(ctx, MaintainOptions{Retention: &GCOptions{AutoKeepLast: 100}})
		retWall, retCPU := time.Since(t0), cpuTime()-c0
		if err != nil || ret.Retention == nil {
			b.Fatalf("retention: %+v %v", ret, err)
		}
		sizeC := dirSize(b, stateB)
		b.Logf("retention: removed %d checkpoints; lock held %v; %v wall, %v CPU; store %.2f MB after the first checkpoint, then %.2f MB after the 400 calls without maintenance, %.2f MB merged, %.2f MB after the retention",
			len(ret.Retention.Removed), ret.MaxHoldExact, retWall, retCPU, float64(size0)/1e6, float64(sizeA)/1e6, float64(sizeB)/1e6, float64(sizeC)/1e6)
		b.ReportMetric(float64(ret.MaxHoldExact)/1e6, "retention-hold-ms")
		b.ReportMetric(float64(sizeA)/1e6, "store-MB-no-retention")
		b.ReportMetric(float64(sizeC)/1e6, "store-MB-retention")
	}
}

// BenchmarkMaintenanceDue: what the hook adds to an automatic checkpoint that stored something,
// at 32 small packs (the most it sees without maintenance being due), against the checkpoint's
// own lookup of every pack index (BenchmarkCheckpoint10Changes is the checkpoint).
func BenchmarkMaintenanceDue(b *testing.B) {
	h := newHistory(b, upkeep.AutoPackLimit-1, 0, Options{})
	if n := packCount(b, h.s); n != upkeep.AutoPackLimit {
		b.Fatalf("%d packs", n)
	}
	b.ResetTimer()
	for b.Loop() {
		due, err := h.s.MaintenanceDue(true)
		if err != nil || due.SmallPacks != 0 {
			b.Fatal(due, err)
		}
	}
}

package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/agent-rewind/rewind/tools/bench/baseline"
	"github.com/agent-rewind/rewind/tools/bench/measure"
	"github.com/agent-rewind/rewind/tools/bench/workspace"
)

// The snapshot suite (issue 3's Performance section): the real agent-rewind binary against a
// shadow git repository and a bare stat walk, on the generated workspace, in one run:
//
//	first checkpoint             vs git add -A && git commit   goal <= 0.2
//	checkpoint, no change        vs the faster stat walk       goal <= 1.0 (issue 17)
//	checkpoint after 10 changes  vs the faster stat walk       goal <= 1.2 (issue 17)
//	rewind of 10 changes         vs git reset --hard && clean  goal <= 0.8 (issue 17)
//	store size after the first checkpoint / workspace bytes    goal <= 1.1
//	store growth after 10 changes / bytes changed              (about 1), all of .rewind/ and
//	                                                            the contents alone
//	store growth after 10 changes / (2 × changed + 64 KiB)     goal <= 1 (issue 17)
//	store growth after 1 MiB appended to / rewritten inside a
//	1 GiB file (64 MiB with --quick), MiB                      goal <= 4 (issue 17)
//	agent-rewind version - true, the fixed cost of a command   (information)
//	peak RSS of any checkpoint or rewind                       goal <= 300 MiB
//
// It needs the commands "agent-rewind checkpoint" and "agent-rewind rewind <id>", and reads the
// new checkpoint's id from "checkpoint --json" (snapshotIDField).
func init() {
	register(Suite{
		Name:        "snapshot",
		Description: "checkpoint and rewind (agent-rewind binary) vs shadow git and a bare stat walk on the generated workspace",
		Modules:     []string{"snapshot", "cli"},
		Run:         runSnapshot,
	})
}

// snapshotIDField is the member of "agent-rewind checkpoint --json" holding the checkpoint id.
const snapshotIDField = "id"

// snapshotSkip are the names the stat walks and the change maker never enter: none, since the
// store lives outside the workspace (docs/store.md); the shadow git needs no exclude either.
var snapshotSkip []string

func runSnapshot(ctx context.Context, b *Bench) error {
	agent, err := b.Agent(ctx)
	if err != nil {
		return err
	}
	agent = agent.With("REWIND_WATCH=off") // these are the figures without the change watcher (suite_watch.go)
	if err := agent.Require(ctx, b, []string{"checkpoint"}, []string{"rewind"}); err != nil {
		return err
	}
	if _, err := exec.LookPath("git"); err != nil {
		return errors.New("git is not on PATH: the shadow-git baseline needs it (apt-get install git)")
	}
	ws, res, err := b.FreshWorkspace(ctx, b.Shape()) // this suite changes the tree: its own copy
	if err != nil {
		return err
	}
	gitParent, err := b.TempDir("shadow-git")
	if err != nil {
		return err
	}
	gitDir := filepath.Join(gitParent, "git")
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var meta string // the workspace's store, as "agent-rewind store" reports it after the first checkpoint

	var peak measure.Series // every agent-rewind run, for the peak RSS figure
	peak.Name = "every agent-rewind checkpoint and rewind of this suite"
	checkpoint := func(ctx context.Context) (measure.Sample, string, error) {
		r, err := measure.Run(agent.Command(ctx, ws, "--json", "checkpoint"))
		if err != nil {
			return r.Sample, "", err
		}
		peak.Samples = append(peak.Samples, r.Sample)
		var out map[string]any
		if err := json.Unmarshal(r.Stdout, &out); err != nil {
			return r.Sample, "", fmt.Errorf("checkpoint --json printed no JSON object: %v: %.200q", err, r.Stdout)
		}
		id, ok := out[snapshotIDField].(string)
		if !ok || id == "" {
			return r.Sample, "", fmt.Errorf("checkpoint --json has no string %q member (adjust snapshotIDField in suite_snapshot.go): %.200q", snapshotIDField, r.Stdout)
		}
		return r.Sample, id, nil
	}
	ours := func(name string, setup func(context.Context) error) measure.Arm {
		return measure.Arm{Name: name, Setup: setup, Run: func(ctx context.Context) (measure.Sample, error) {
			s, _, err := checkpoint(ctx)
			return s, err
		}}
	}
	var git *baseline.ShadowGit

	// 1. First checkpoint: each repetition starts from no store at all, for both.
	b.Logf("first checkpoint: agent-rewind vs shadow git, %d each", b.Reps(3, 2))
	first, err := measure.Alternate(ctx, b.Reps(3, 2),
		ours("agent-rewind checkpoint (first)", func(context.Context) error {
			return agent.ResetState() // every store lives under the state home
		}),
		measure.Arm{
			Name: "shadow git: git add -A && git commit (first)",
			Setup: func(ctx context.Context) error {
				if err := os.RemoveAll(gitDir); err != nil {
					return err
				}
				git, err = baseline.InitShadowGit(ctx, gitDir, ws)
				return err
			},
			Run: func(ctx context.Context) (measure.Sample, error) { return git.Checkpoint(ctx) },
		})
	if err != nil {
		return err
	}
	b.Ratio("first_checkpoint", first[0], first[1], AtMost(0.2), "")
	if meta, err = agent.Store(ctx, ws); err != nil {
		return err
	}
	store, err := baseline.DirBytes(meta)
	if err != nil {
		return err
	}
	b.Value("store_size_first", float64(store)/float64(res.Bytes), "ratio", fmt.Sprintf("workspace bytes (%d)", res.Bytes), nil, AtMost(1.1),
		fmt.Sprintf("the store holds %d bytes after the first checkpoint", store))
	if gs, err := git.Size(); err == nil {
		b.Value("shadow_git_store_size_first", float64(gs)/float64(res.Bytes), "ratio", fmt.Sprintf("workspace bytes (%d)", res.Bytes), nil, NoGoal,
			"for comparison: git zlib-compresses objects, and the generated binaries are incompressible")
	}

	// The stat-walk floors, alternated with the checkpoint they bound.
	find := measure.Arm{Name: "find (lstat of every entry)", Run: func(ctx context.Context) (measure.Sample, error) {
		return baseline.Find(ctx, ws, snapshotSkip...)
	}}
	walk := measure.Arm{Name: "WalkDir + lstat (child process)", Run: func(ctx context.Context) (measure.Sample, error) {
		r, err := measure.Run(exec.CommandContext(ctx, self, append([]string{"statwalk", ws}, snapshotSkip...)...))
		return r.Sample, err
	}}
	faster := func(a, b measure.Series) measure.Series {
		if a.MedianWall() <= b.MedianWall() {
			return a
		}
		return b
	}

	// 2. Checkpoint with no change.
	reps := b.Reps(7, 3)
	b.Logf("no-change checkpoint vs stat walks, %d each", reps)
	nochange, err := measure.Alternate(ctx, reps, ours("agent-rewind checkpoint (no change)", nil), find, walk)
	if err != nil {
		return err
	}
	den := faster(nochange[1], nochange[2])
	b.Ratio("checkpoint_no_change", nochange[0], den, AtMost(1.0), "denominator: the faster stat walk, "+den.Name)

	// 3. Checkpoint after 10 changed files (new changes every repetition).
	var changed, grown, grownContent int64
	var beforeContent int64
	seed := uint64(1000)
	b.Logf("10-change checkpoint vs stat walks, %d each", reps)
	var before, beforeLog, logGrown int64
	tenChanges := ours("agent-rewind checkpoint (10 changed files)", func(context.Context) error {
		seed++
		cs, err := workspace.MakeChanges(ws, 10, seed, snapshotSkip...)
		changed += workspace.ChangedBytes(cs)
		if err == nil {
			before, err = baseline.DirBytes(meta)
		}
		if err == nil {
			beforeContent, err = contentBytes(meta)
		}
		beforeLog = fileBytes(filepath.Join(meta, "log"))
		return err
	})
	run := tenChanges.Run
	tenChanges.Run = func(ctx context.Context) (measure.Sample, error) {
		s, err := run(ctx)
		if err == nil {
			after, derr := baseline.DirBytes(meta)
			grown += after - before
			logGrown += fileBytes(filepath.Join(meta, "log")) - beforeLog
			err = derr
		}
		if err == nil {
			after, derr := contentBytes(meta)
			grownContent += after - beforeContent
			err = derr
		}
		return s, err
	}
	change10, err := measure.Alternate(ctx, reps, tenChanges, find, walk)
	if err != nil {
		return err
	}
	den = faster(change10[1], change10[2])
	b.Ratio("checkpoint_10_changes", change10[0], den, AtMost(1.2), "denominator: the faster stat walk, "+den.Name)
	b.Value("store_growth_10_changes", float64(grown)/float64(changed), "ratio", fmt.Sprintf("bytes written by the changes (%d over %d checkpoints)", changed, reps), nil, NoGoal,
		"all of the store: the contents plus, per checkpoint, the manifest trees of the changed directories and their ancestors, its metadata and chain entry, and the stat cache's log (or its rewrite)")
	b.Value("store_content_growth_10_changes", float64(grownContent)/float64(changed), "ratio", fmt.Sprintf("bytes written by the changes (%d over %d checkpoints)", changed, reps), nil, NoGoal,
		"issue 3: later checkpoints add about the changed bytes; this counts objects/ and packs/ only (the contents, and the manifest trees packed with them)")
	// Issue 17: what a checkpoint writes is proportional to what changed. The budget per
	// checkpoint is twice the changed bytes plus 64 KiB (the new trees, the metadata, the chain
	// entry); the stat cache counts too, as every byte of the store does.
	// The store's commit log (snapshot/FORMAT.md) holds each checkpoint's files again until a
	// writer settles it (past 2 MiB, or any rewind, restore or GC): bytes that go away, shown
	// apart, and the budget is on what stays.
	budget := 2*changed + int64(reps)*64<<10
	b.Value("store_growth_10_changes_budget", float64(grown-logGrown)/float64(budget), "ratio", fmt.Sprintf("2 × the changed bytes + 64 KiB per checkpoint (%d over %d checkpoints)", budget, reps), nil, AtMost(1),
		fmt.Sprintf("the store grew by %d bytes over %d checkpoints of 10 changed files, %d of them in the commit log, which the next settle empties; the budget is on the rest", grown, reps, logGrown))
	b.Value("store_growth_commit_log", float64(logGrown)/float64(budget), "ratio", "the same budget", nil, NoGoal,
		"what the commit log grew by over the same checkpoints: copies of their files until the log is settled (at 2 MiB at most, plus the last record)")

	// 4. Rewind of 10 changed files, against git reset --hard && git clean on the same state.
	_, target, err := checkpoint(ctx)
	if err != nil {
		return err
	}
	if _, err := git.Checkpoint(ctx); err != nil {
		return err
	}
	rev, err := git.Head(ctx)
	if err != nil {
		return err
	}
	want, err := workspace.Listing(ws, snapshotSkip...)
	if err != nil {
		return err
	}
	var exact, checked int64
	seedA, seedB := uint64(2000), uint64(2000)
	b.Logf("rewind of 10 changes vs git reset --hard + clean, %d each", reps)
	rewind, err := measure.Alternate(ctx, reps,
		measure.Arm{
			Name: "agent-rewind rewind (10 changed files)",
			Setup: func(context.Context) error {
				seedA++
				_, err := workspace.MakeChanges(ws, 10, seedA, snapshotSkip...)
				return err
			},
			Run: func(ctx context.Context) (measure.Sample, error) {
				r, err := measure.Run(agent.Command(ctx, ws, "--json", "rewind", target))
				peak.Samples = append(peak.Samples, r.Sample)
				return r.Sample, err
			},
		},
		measure.Arm{
			Name: "shadow git: git reset --hard && git clean -fdq",
			Setup: func(context.Context) error {
				// First check, untimed, that the rewind just measured restored the target exactly.
				got, err := workspace.Listing(ws, snapshotSkip...)
				if err != nil {
					return err
				}
				checked++
				if got == want {
					exact++
				}
				seedB++
				_, err = workspace.MakeChanges(ws, 10, seedB, snapshotSkip...)
				return err
			},
			Run: func(ctx context.Context) (measure.Sample, error) { return git.Restore(ctx, rev) },
		})
	if err != nil {
		return err
	}
	b.Ratio("rewind_10_changes", rewind[0], rewind[1], AtMost(0.8),
		"each side undoes the same 10 changes; git clean also deletes the empty directories git never tracked, which the next rewind recreates")
	b.Count("rewind_exact", exact, checked, "rewinds", "rewinds whose result was byte-identical to the target checkpoint (listing hash)", Exactly(float64(checked)), "")
	b.Value("peak_rss", float64(peak.PeakRSS())/(1<<20), "MiB", peak.Name, nil, AtMost(300), "the largest ru_maxrss among them")

	// 5. One large file changed a little (issue 17: an agent's dev server appending to a log, a
	// database rewriting a few pages): the store should grow by about the change, not the file.
	if err := largeFileGrowth(ctx, b, ws, meta, checkpoint); err != nil {
		return err
	}

	// 6. What every figure above pays for being a command: process start, package init and
	// parsing the command line, against true(1), which pays only the start of a process.
	start, err := measure.Alternate(ctx, b.Reps(15, 9),
		measure.Arm{Name: "agent-rewind version", Run: func(ctx context.Context) (measure.Sample, error) {
			r, err := measure.Run(agent.Command(ctx, ws, "version"))
			return r.Sample, err
		}},
		measure.Arm{Name: "true", Run: baseline.True})
	if err != nil {
		return err
	}
	b.Added("cli_process_start", start[0], start[1], 50, NoGoal,
		"included once in every agent-rewind figure above; the module itself (snapshot/bench_test.go) runs without it")
	return nil
}

// contentBytes is the size of the stored contents under a state directory: objects/, packs/ and
// chunklists/.
func contentBytes(meta string) (int64, error) {
	var n int64
	for _, d := range []string{"objects", "packs", "chunklists"} {
		b, err := baseline.DirBytes(filepath.Join(meta, d))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
		n += b
	}
	return n, nil
}

// largeFileGrowth adds a large file of random bytes (1 GiB, 64 MiB with --quick), checkpoints it,
// then appends 1 MiB and checkpoints, then rewrites 1 MiB in its middle and checkpoints, and
// reports how much the store grew at each of the last two (goal: at most 4 MiB each).
func largeFileGrowth(ctx context.Context, b *Bench, ws, meta string, checkpoint func(context.Context) (measure.Sample, string, error)) error {
	size := int64(b.Reps(1024, 64)) << 20
	const change = 1 << 20
	name := filepath.Join(ws, "large-file.bin")
	b.Logf("large file: %d MiB, then 1 MiB appended, then 1 MiB rewritten inside", size>>20)
	if err := writeRandom(name, 0, size, 17); err != nil {
		return err
	}
	defer os.Remove(name)
	if _, _, err := checkpoint(ctx); err != nil {
		return err
	}
	for _, step := range []struct {
		figure string
		off    int64
		what   string
	}{
		{"store_growth_large_file_append", size, "appending 1 MiB to"},
		{"store_growth_large_file_rewrite", size / 2, "rewriting 1 MiB inside"},
	} {
		before, err := baseline.DirBytes(meta)
		if err != nil {
			return err
		}
		if err := writeRandom(name, step.off, change, uint64(step.off)); err != nil {
			return err
		}
		if _, _, err := checkpoint(ctx); err != nil {
			return err
		}
		after, err := baseline.DirBytes(meta)
		if err != nil {
			return err
		}
		b.Value(step.figure, float64(after-before)/(1<<20), "MiB", fmt.Sprintf("store growth after %s a %d MiB file", step.what, size>>20), nil, AtMost(4),
			fmt.Sprintf("the checkpoint after the change grew the store by %d bytes", after-before))
	}
	return nil
}

// writeRandom writes n pseudo-random (incompressible) bytes of the given seed at off in name,
// creating it if needed.
func writeRandom(name string, off, n int64, seed uint64) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(seed, 17))
	buf := make([]byte, 1<<20)
	for done := int64(0); done < n; {
		k := min(int64(len(buf)), n-done)
		for i := 0; i < int(k); i += 8 {
			binary.LittleEndian.PutUint64(buf[i:], r.Uint64())
		}
		if _, err := f.WriteAt(buf[:k], off+done); err != nil {
			f.Close()
			return err
		}
		done += k
	}
	return f.Close()
}

// fileBytes is the size of the file at name, 0 when there is none.
func fileBytes(name string) int64 {
	fi, err := os.Stat(name)
	if err != nil {
		return 0
	}
	return fi.Size()
}

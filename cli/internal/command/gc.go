package command

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/hook"
	"github.com/agent-rewind/rewind/cli/internal/prompts"
	"github.com/agent-rewind/rewind/snapshot"
)

// GCCmd removes old checkpoints and the contents no kept checkpoint needs.
type GCCmd struct {
	KeepLast   int     `help:"Keep the newest N checkpoints." placeholder:"N"`
	KeepWithin ageFlag `help:"Keep checkpoints younger than this: a Go duration (90m, 36h) or days and weeks (7d, 2w)." placeholder:"DURATION"`
	// The retention of automatic checkpoints (those agents' hooks take before tool calls): on
	// by default, since hooks take one before every call that changes something.
	AutoKeepLast   int     `help:"Keep the newest N automatic checkpoints of each agent session (0 with --auto-keep-within 0: treat them like the others)." default:"100" placeholder:"N"`
	AutoKeepWithin ageFlag `help:"Keep automatic checkpoints younger than this." default:"7d" placeholder:"DURATION"`
	DryRun         bool    `help:"Print what would be removed, and remove nothing."`
	Auto           bool    `help:"Instead, the automatic maintenance agents' hooks start: only if due, merge small packs and (once a day; REWIND_AUTO_RETENTION=off: never) apply --auto-keep-last and --auto-keep-within, giving way to any checkpoint."`
	Orphans        bool    `help:"Instead, remove the stores whose workspace folder is gone (deleted, made again, or moved and not opened since); with --dry-run, only list them."`
}

// ageFlag is a duration that also accepts whole days and weeks ("7d", "2w").
type ageFlag time.Duration

// UnmarshalText parses a Go duration, or N followed by d (days) or w (weeks).
func (a *ageFlag) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			v, err := strconv.ParseUint(n, 10, 32)
			if err != nil {
				return fmt.Errorf("%q is not a duration: give a whole number of days or weeks (7d, 2w) or a Go duration (36h)", s)
			}
			*a = ageFlag(time.Duration(v) * unit)
			return nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("%q is not a duration: give a Go duration (90m, 36h) or days or weeks (7d, 2w)", s)
	}
	*a = ageFlag(d)
	return nil
}

// GCOutput is the --json shape of "gc": the module's result (snapshot.GCResult: dryRun,
// removed, kept, protected, manifestsRemoved, objectsRemoved, bytesFreed) and why each
// protected checkpoint was kept whatever the flags say.
type GCOutput struct {
	*snapshot.GCResult
	ProtectedReasons []ProtectedReason `json:"protectedReasons"`
	// PromptsRemoved counts the prompts dropped from the prompt log, their automatic
	// checkpoints all gone (cli/internal/prompts.Prune); in a dry run, those it would drop.
	PromptsRemoved int `json:"promptsRemoved"`
}

// ProtectedReason says why gc kept a checkpoint whatever the retention flags said.
type ProtectedReason struct {
	ID     string `json:"id"`
	Reason string `json:"reason"` // "current position", or "safety checkpoint of the last rewind: undoing it restores it"
}

// Run collects garbage.
func (c *GCCmd) Run(env *Env) error {
	if c.Orphans {
		if c.KeepLast != 0 || c.KeepWithin != 0 { // (the --auto-keep defaults do not apply to --orphans)
			return fmt.Errorf("--orphans removes whole stores of gone workspaces; it takes no --keep-last or --keep-within (run gc without --orphans for those)")
		}
		return gcOrphans(env, c.DryRun)
	}
	if c.Auto {
		return c.maintain(env)
	}
	if c.KeepLast < 0 {
		return fmt.Errorf("--keep-last %d: give a number of checkpoints, 1 or more", c.KeepLast)
	}
	if c.AutoKeepLast < 0 {
		return fmt.Errorf("--auto-keep-last %d: give a number of automatic checkpoints per session, 0 or more", c.AutoKeepLast)
	}
	s, err := openSnapshots(env, false)
	if err != nil {
		return err
	}
	defer s.close()
	before, err := s.store.List() // for the removed checkpoints' times and labels, and the position
	if err != nil {
		return err
	}
	res, err := s.store.GC(context.Background(), snapshot.GCOptions{KeepLast: c.KeepLast, KeepWithin: time.Duration(c.KeepWithin),
		AutoKeepLast: c.AutoKeepLast, AutoKeepWithin: time.Duration(c.AutoKeepWithin), DryRun: c.DryRun})
	var promptsRemoved int
	switch {
	case err == nil && c.DryRun:
		promptsRemoved, err = prompts.WouldPrune(s.ws.Path(prompts.File), withoutCheckpoints(before.Sessions, res.Removed), time.Duration(c.AutoKeepWithin), time.Now())
	case err == nil:
		promptsRemoved, err = prompts.PruneStore(s.ws.Path(prompts.File), s.store, time.Duration(c.AutoKeepWithin))
	}
	s.done()
	if err != nil {
		return err
	}
	out := &GCOutput{GCResult: res, ProtectedReasons: []ProtectedReason{}, PromptsRemoved: promptsRemoved}
	for _, id := range res.Protected {
		var why []string
		if id == before.Current {
			why = append(why, "current position")
		}
		if before.Last != nil && id == before.Last.Safety {
			why = append(why, fmt.Sprintf("safety checkpoint of the last %s: undoing it restores this", before.Last.Op))
		}
		if before.LastRestore != nil && id == before.LastRestore.Safety {
			why = append(why, "safety checkpoint of the last restore: it holds what the restored paths held before")
		}
		out.ProtectedReasons = append(out.ProtectedReasons, ProtectedReason{ID: id, Reason: strings.Join(why, "; ")})
	}
	byID := map[string]*snapshot.Checkpoint{}
	for i := range before.Checkpoints {
		byID[before.Checkpoints[i].ID] = &before.Checkpoints[i]
	}
	return env.Emit(out, func(w io.Writer) error {
		head, freed := "removed %s, kept %s\n", "freed"
		if res.DryRun {
			head, freed = "dry run: would remove %s and keep %s\n", "would free"
		}
		fmt.Fprintf(w, head, plural(len(res.Removed), "checkpoint", "checkpoints"), plural(res.Kept, "checkpoint", "checkpoints"))
		for i, id := range res.Removed {
			if i == shownChanges {
				fmt.Fprintf(w, "  … and %s more (--json lists them)\n", count(len(res.Removed)-i))
				break
			}
			desc := id
			if cp := byID[id]; cp != nil {
				desc = fmt.Sprintf("%s  %s  %-6s  %s", id, localTime(cp.Time), cp.Kind, printable(cp.Label))
			}
			fmt.Fprintf(w, "  - %s\n", desc)
		}
		for _, p := range out.ProtectedReasons {
			fmt.Fprintf(w, "  kept %s whatever the flags say: %s\n", p.ID, p.Reason)
		}
		fmt.Fprintf(w, "%s %s (%s) and %s no kept checkpoint needs\n", freed,
			plural(res.ObjectsRemoved, "stored content", "stored contents"), byteSize(res.BytesFreed), plural(res.ManifestsRemoved, "manifest", "manifests"))
		if out.PromptsRemoved > 0 {
			verb := "dropped"
			if res.DryRun {
				verb = "would drop"
			}
			fmt.Fprintf(w, "%s %s whose automatic checkpoints are all gone from the prompt log\n", verb, plural(out.PromptsRemoved, "prompt", "prompts"))
		}
		auto := c.AutoKeepLast > 0 || c.AutoKeepWithin > 0
		if auto {
			fmt.Fprintf(w, "automatic checkpoints: kept the newest %d of each agent session and those younger than %s (--auto-keep-last, --auto-keep-within)\n", c.AutoKeepLast, time.Duration(c.AutoKeepWithin))
		}
		if c.KeepLast == 0 && c.KeepWithin == 0 {
			if auto {
				fmt.Fprintln(w, "(no --keep-last or --keep-within: every other checkpoint is kept)")
			} else {
				fmt.Fprintln(w, "(no --keep-last or --keep-within: every checkpoint is kept; only unreferenced contents go)")
			}
		}
		return nil
	})
}

// withoutCheckpoints is sessions less the calls whose checkpoint is one of removed (what gc
// would leave).
func withoutCheckpoints(sessions []snapshot.Session, removed []string) []snapshot.Session {
	gone := map[string]bool{}
	for _, id := range removed {
		gone[id] = true
	}
	var out []snapshot.Session
	for _, s := range sessions {
		s.Calls = slices.DeleteFunc(slices.Clone(s.Calls), func(c snapshot.CallRecord) bool { return gone[c.Checkpoint] })
		if len(s.Calls) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// maintain runs the automatic maintenance (gc --auto) and prints what it did: its --json shape
// is snapshot.MaintainResult (due, packsMerged, batches, retention: a gc result or null,
// maxHoldMs, skipped).
func (c *GCCmd) maintain(env *Env) error {
	switch {
	case c.Orphans || c.KeepLast != 0 || c.KeepWithin != 0:
		return fmt.Errorf("--auto applies the retention of automatic checkpoints alone: it takes no --orphans, --keep-last or --keep-within")
	case c.DryRun:
		return fmt.Errorf("--auto has no dry run: agent-rewind gc --dry-run lists what the retention of automatic checkpoints would remove")
	case c.AutoKeepLast < 0:
		return fmt.Errorf("--auto-keep-last %d: give a number of automatic checkpoints per session, 0 or more", c.AutoKeepLast)
	}
	retention, err := hook.AutoRetention()
	if err != nil {
		return err
	}
	if retention != nil {
		retention.AutoKeepLast, retention.AutoKeepWithin = c.AutoKeepLast, time.Duration(c.AutoKeepWithin)
	}
	s, err := openSnapshots(env, false)
	if err != nil {
		return err
	}
	defer s.close()
	res, err := s.store.Maintain(context.Background(), snapshot.MaintainOptions{Retention: retention})
	if err == nil && res.Retention != nil {
		_, err = prompts.PruneStore(s.ws.Path(prompts.File), s.store, time.Duration(c.AutoKeepWithin))
	}
	s.done()
	if err != nil {
		return err
	}
	return env.Emit(res, func(w io.Writer) error {
		if !res.Due.Any() {
			fmt.Fprintln(w, "nothing due: fewer than 33 small packs, and the retention of automatic checkpoints applied within a day (or off)")
		}
		if res.PacksMerged > 0 {
			fmt.Fprintf(w, "merged %s in %s (the store's lock held %s at most at once)\n", plural(res.PacksMerged, "small pack", "small packs"), plural(res.Batches, "batch", "batches"), time.Duration(res.MaxHold).Round(time.Millisecond))
		}
		if r := res.Retention; r != nil {
			fmt.Fprintf(w, "removed %s (automatic checkpoints: kept the newest %d of each agent session and those younger than %s), freed %s\n",
				plural(len(r.Removed), "checkpoint", "checkpoints"), c.AutoKeepLast, time.Duration(c.AutoKeepWithin), byteSize(r.BytesFreed))
		} else if res.Due.Retention && res.Skipped == "" {
			fmt.Fprintln(w, "the retention of automatic checkpoints removes nothing today")
		}
		if res.Skipped != "" {
			fmt.Fprintln(w, "stopped early: "+res.Skipped)
		}
		return nil
	})
}

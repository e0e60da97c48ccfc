package snapshot

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/agent-rewind/rewind/snapshot/internal/walk"
)

// The stat cache is trusted only as far as it is checked: every capture re-reads a small random
// sample of the files the cache vouches for (FORMAT.md, "Index"). A cache that vouches for
// content a file does not have (damaged by hand, by a tool, or by a bug) is then found within a
// few captures, and that capture distrusts all of it.

// sampleMin and sampleShare size the sample: at least sampleMin files, or one vouched file in
// sampleShare when there are more; sampleMaxSize leaves large files to "check", so one sample
// never costs more than reading sampleMin*sampleMaxSize bytes plus one file in sampleShare.
// BenchmarkCheckpointNoChangeSampled measures the cost against a capture without the sample.
const (
	sampleMin     = 8
	sampleShare   = 256
	sampleMaxSize = 256 << 10
)

// sampleCount returns how many of n vouched files a capture re-reads.
func sampleCount(n int) int {
	return min(n, max(sampleMin, n/sampleShare))
}

// pickSample returns k distinct elements of vouched, chosen at random (a partial Fisher-Yates
// shuffle of a copy).
func pickSample(vouched []int, k int) []int {
	v := append([]int(nil), vouched...)
	for i := 0; i < k; i++ {
		j := i + rand.IntN(len(v)-i)
		v[i], v[j] = v[j], v[i]
	}
	return v[:k]
}

// verifySample re-reads the sampled files and returns the paths whose content is not the blob the
// stat cache gave them. A file that changed since the walk or cannot be read is not evidence
// against the cache and is left out.
func (s *Store) verifySample(ctx context.Context, entries []walk.LiveEntry, sample []int) ([]string, error) {
	var (
		mu    sync.Mutex
		wrong []string
		n     atomic.Int64
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opts.Parallelism)
	for _, i := range sample {
		e := &entries[i]
		g.Go(func() error {
			if gctx.Err() != nil {
				return gctx.Err()
			}
			h, err := hashFile(filepath.Join(s.root, e.Path), e.St, nil, &n)
			if err == nil && h != e.Blob {
				mu.Lock()
				wrong = append(wrong, e.Path)
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return wrong, nil
}

// distrustWarning says what a capture did about a stat cache caught vouching for wrong content.
func distrustWarning(wrong []string, sampled int, rest string) string {
	shown := wrong[:min(len(wrong), 3)]
	more := ""
	if len(wrong) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(wrong)-len(shown))
	}
	return fmt.Sprintf("the stat cache vouched for content that %s%s did not have (%d of %d sampled files disagreed; the cache was damaged outside agent-rewind): it was distrusted and every file was read again; %s",
		strings.Join(quoteAll(shown), ", "), more, len(wrong), sampled, rest)
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

package command

import (
	"fmt"
	"io"
	"strings"

	"github.com/agent-rewind/rewind/cacheplan"
	"github.com/agent-rewind/rewind/internal/regular"
)

// MaxCompareBytes bounds each file given to cache-compare.
const MaxCompareBytes = 2 << 20

// CacheCompareCmd compares two consecutive Messages request bodies' cacheable prefixes.
type CacheCompareCmd struct {
	Previous string `arg:"" name:"previous" help:"The earlier request body: a regular UTF-8 JSON file of at most 2 MiB."`
	Current  string `arg:"" name:"current" help:"The later request body, likewise."`
}

// Run compares and reports; it prints no prompt or response text.
func (c *CacheCompareCmd) Run(env *Env) error {
	prev, err := readCompareFile("previous", c.Previous)
	if err != nil {
		return err
	}
	cur, err := readCompareFile("current", c.Current)
	if err != nil {
		return err
	}
	cmp, err := cacheplan.Compare(prev, cur)
	if err != nil {
		return fmt.Errorf("%w; give two Anthropic Messages request bodies (JSON objects with a messages array)", err)
	}
	return env.Emit(cmp, func(w io.Writer) error { return writeComparison(w, cmp) })
}

// readCompareFile reads one input: a regular file, at most MaxCompareBytes.
func readCompareFile(which, path string) ([]byte, error) {
	f, err := regular.OpenInput(path)
	if err != nil {
		return nil, fmt.Errorf("%s request file %s: %w", which, path, osReason(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s request file %s: %w", which, path, osReason(err))
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s request file %s is not a regular file; save the request body to a file first", which, path)
	}
	if st.Size() > MaxCompareBytes {
		return nil, fmt.Errorf("%s request file %s is %d bytes, over the %d-byte (2 MiB) limit", which, path, st.Size(), MaxCompareBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxCompareBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s request file %s: %w", which, path, osReason(err))
	}
	if len(data) > MaxCompareBytes {
		return nil, fmt.Errorf("%s request file %s grew past the %d-byte (2 MiB) limit while being read", which, path, MaxCompareBytes)
	}
	return data, nil
}

func writeComparison(w io.Writer, c *cacheplan.Comparison) error {
	var b strings.Builder
	fmt.Fprintf(&b, "cache-compare: %s\n", c.Class)
	if c.FirstChangedPath != "" {
		fmt.Fprintf(&b, "  first changed: %s\n", c.FirstChangedPath)
	}
	if len(c.ChangedSettings) > 0 {
		fmt.Fprintf(&b, "  changed settings: %s\n", strings.Join(c.ChangedSettings, ", "))
	}
	side := func(name string, s cacheplan.BodySummary) {
		markers := "none"
		if len(s.CacheControl) > 0 {
			var l []string
			for _, m := range s.CacheControl {
				l = append(l, m.String())
			}
			markers = strings.Join(l, ", ")
		}
		fmt.Fprintf(&b, "  %s: %d messages, %d blocks, %d bytes; cache_control at %s\n", name, s.Messages, s.Blocks, s.Bytes, markers)
	}
	side("previous", c.Previous)
	side("current", c.Current)
	fmt.Fprintf(&b, "  identical leading messages: %d; appended: %d messages, %d blocks\n", c.CommonMessages, c.AppendedMessages, c.AppendedBlocks)
	fmt.Fprintf(&b, "  reusable prefix: %d bytes, about %d tokens (estimate: JSON bytes / %d)\n", c.ReusablePrefixBytes, c.EstimatedReusablePrefixTokens, cacheplan.BytesPerToken)
	if c.CacheControlMoved {
		fmt.Fprintf(&b, "  cache_control markers moved between the requests (reported, not compared)\n")
	}
	fmt.Fprintf(&b, "  recommendation: %s\n", c.Recommendation)
	for _, warn := range c.Warnings {
		fmt.Fprintf(&b, "  warning [%s]: %s\n", warn.Code, warn.Message)
	}
	fmt.Fprintf(&b, "  note: %s\n", c.Note)
	_, err := io.WriteString(w, b.String())
	return err
}

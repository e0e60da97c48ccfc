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

// CacheCompareCmd compares two consecutive request bodies' cacheable prefixes (Anthropic
// Messages, OpenAI Responses or Chat Completions).
type CacheCompareCmd struct {
	Previous string `arg:"" name:"previous" help:"The earlier request body: a regular UTF-8 JSON file of at most 2 MiB."`
	Current  string `arg:"" name:"current" help:"The later request body, likewise."`
	APIFlag  `embed:""`
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
	cmp, err := cacheplan.CompareWith(prev, cur, cacheplan.CompareOptions{Format: c.format()})
	if err != nil {
		return fmt.Errorf("%w; give two consecutive request bodies of one API (%s), and --api to say which when one was misread", err, cacheplan.SupportedShapes)
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
	fmt.Fprintf(&b, "  read as: %s\n", readAs(c.Format, c.Detection))
	if c.FirstChangedPath != "" {
		fmt.Fprintf(&b, "  first changed: %s\n", c.FirstChangedPath)
	}
	if len(c.ChangedSettings) > 0 {
		fmt.Fprintf(&b, "  changed settings: %s\n", strings.Join(c.ChangedSettings, ", "))
	}
	if len(c.IgnoredSettings) > 0 {
		fmt.Fprintf(&b, "  changed, not part of the prompt: %s\n", strings.Join(c.IgnoredSettings, ", "))
	}
	items, markers := "messages", "cache_control"
	if c.Format == cacheplan.FormatResponses {
		items = "input items"
	}
	if c.Format != cacheplan.FormatMessages {
		markers = "prompt_cache_breakpoint"
	}
	markerName := markers
	side := func(name string, s cacheplan.BodySummary) {
		where := "none"
		if len(s.CacheControl) > 0 {
			var l []string
			for _, m := range s.CacheControl {
				l = append(l, m.String())
			}
			where = strings.Join(l, ", ")
		}
		fmt.Fprintf(&b, "  %s: %d %s, %d blocks, %d bytes; %s at %s\n", name, s.Messages, items, s.Blocks, s.Bytes, markerName, where)
	}
	side("previous", c.Previous)
	side("current", c.Current)
	fmt.Fprintf(&b, "  identical leading %s: %d; appended: %d %s, %d blocks\n", items, c.CommonMessages, c.AppendedMessages, items, c.AppendedBlocks)
	fmt.Fprintf(&b, "  reusable prefix: %d bytes, about %d tokens (estimate: JSON bytes / %d)", c.ReusablePrefixBytes, c.EstimatedReusablePrefixTokens, cacheplan.BytesPerToken)
	if c.Format != cacheplan.FormatMessages {
		fmt.Fprintf(&b, "; OpenAI's cache holds about %d of them (whole 128-token blocks, from 1024)", c.CacheableReusableTokens)
	}
	b.WriteString("\n")
	if c.CacheControlMoved {
		fmt.Fprintf(&b, "  %s markers moved between the requests (reported, not compared)\n", markers)
	}
	fmt.Fprintf(&b, "  recommendation: %s\n", c.Recommendation)
	for _, warn := range c.Warnings {
		fmt.Fprintf(&b, "  warning [%s]: %s\n", warn.Code, warn.Message)
	}
	fmt.Fprintf(&b, "  note: %s\n", c.Note)
	_, err := io.WriteString(w, b.String())
	return err
}

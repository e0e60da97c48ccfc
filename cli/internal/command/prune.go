package command

import (
	"encoding/json"
	"fmt"

	"github.com/agent-rewind/rewind/cacheplan"
)

// PruneCmd collapses repeated identical tool outputs of a request body (Anthropic Messages,
// OpenAI Responses or Chat Completions) into references to the first full one.
type PruneCmd struct {
	Request  string `arg:"" name:"request" help:"The request body: JSON, @PATH to read a file, or - for standard input (at most 32 MiB)."`
	MinBytes int    `name:"min-bytes" default:"256" help:"Leave tool results shorter than this many JSON bytes alone."`
	APIFlag  `embed:""`
}

// PruneOutput is the --json shape of "agent-rewind prune": the summary, then the pruned body
// itself, byte for byte as it would be sent.
type PruneOutput struct {
	Summary *cacheplan.PruneResult `json:"summary"`
	Body    json.RawMessage        `json:"body"`
}

// Run writes the pruned body to stdout and a summary to stderr (or both as one JSON document
// with --json). A body in no supported format is an error: nothing is written to stdout.
func (c *PruneCmd) Run(env *Env) error {
	if c.MinBytes < 1 {
		return fmt.Errorf("--min-bytes must be at least 1, got %d", c.MinBytes)
	}
	body, err := readBodyArg(env, c.Request, MaxBodyBytes)
	if err != nil {
		return err
	}
	out, res, err := cacheplan.Prune(body, cacheplan.PruneOptions{MinBytes: c.MinBytes, Format: c.format()})
	if err != nil {
		return fmt.Errorf("%w; give one request body: %s", err, cacheplan.SupportedShapes)
	}
	if res.Format == cacheplan.FormatOther {
		return unsupported(res.Reason)
	}
	if res.References == nil {
		res.References = []cacheplan.PruneReference{}
	}
	if env.JSON {
		// Written by hand so the body keeps its exact bytes (an encoder would re-indent it).
		summary, err := json.MarshalIndent(res, "  ", "  ")
		if err != nil {
			return err
		}
		doc := append([]byte("{\n  \"summary\": "), summary...)
		doc = append(doc, ",\n  \"body\": "...)
		doc = append(doc, out...)
		doc = append(doc, "\n}\n"...)
		_, err = env.Stdout.Write(doc)
		return err
	}
	if _, err := env.Stdout.Write(out); err != nil {
		return err
	}
	_, err = fmt.Fprintf(env.Stderr, "prune: read as %s; %d of %d tool results were repeats of an earlier one and now refer to it; %d bytes saved (%d -> %d), about %d tokens (estimate: bytes / %d)\n",
		readAs(res.Format, res.Detection), res.Pruned, res.ToolResults, res.BytesSaved, res.BytesBefore, res.BytesAfter, res.EstimatedTokensSaved, cacheplan.BytesPerToken)
	return err
}

package command

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agent-rewind/rewind/analyze"
	"github.com/agent-rewind/rewind/internal/regular"
)

// AnalyzeCmd reports the exact-repeat opportunities in a capture of provider traffic.
type AnalyzeCmd struct {
	Capture    string   `arg:"" optional:"" name:"capture" help:"The capture given inline: a JSON array of records, or one record."`
	File       string   `name:"file" placeholder:"PATH" help:"Read the capture from this file."`
	Stdin      bool     `name:"stdin" help:"Read the capture from standard input."`
	NDJSON     bool     `name:"ndjson" help:"The capture is NDJSON, one record per line (without it, a capture whose first non-blank byte is '[' is read as a JSON array)."`
	LegacyJSON bool     `name:"legacy-json" help:"Write the expanded JSON report: adds a redacted request sample and a per-scope breakdown. Review it before sharing."`
	Origin     []string `name:"origin" placeholder:"URL" help:"Also count this upstream origin (scheme://host[:port]) as known, besides https://api.anthropic.com and https://api.openai.com. Repeatable."`
}

// Validate requires exactly one source: kong reports a failure as a usage error.
func (c *AnalyzeCmd) Validate() error {
	n := 0
	for _, given := range []bool{c.Capture != "", c.File != "", c.Stdin} {
		if given {
			n++
		}
	}
	if n != 1 {
		return errors.New("give exactly one capture: --file PATH, --stdin, or the capture JSON as an argument")
	}
	return nil
}

// Run analyses the capture. Errors name no file path and quote nothing from the capture.
func (c *AnalyzeCmd) Run(env *Env) error {
	opts := analyze.Options{Origins: c.Origin, Legacy: c.LegacyJSON}
	format := analyze.FormatAuto
	if c.NDJSON {
		format = analyze.FormatNDJSON
	}
	var rep *analyze.Report
	var err error
	switch {
	case c.Capture != "":
		if format == analyze.FormatAuto {
			format = analyze.FormatJSON
		}
		rep, err = analyze.RunBytes([]byte(c.Capture), format, opts)
	case c.Stdin:
		rep, err = analyze.Run(env.Stdin, format, opts)
	default:
		f, openErr := regular.OpenInput(c.File)
		if openErr != nil {
			return fmt.Errorf("cannot open the --file capture: %w", osReason(openErr))
		}
		defer f.Close()
		if st, statErr := f.Stat(); statErr == nil && st.IsDir() {
			return errors.New("the --file capture is a directory; give a capture file")
		}
		rep, err = analyze.Run(f, format, opts)
	}
	if err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	if c.LegacyJSON {
		fmt.Fprintln(env.Stderr, "analyze: the legacy report contains scope labels and a redacted request sample: review it before sharing")
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return env.Emit(rep, func(w io.Writer) error { return writeReport(w, rep) })
}

func writeReport(w io.Writer, r *analyze.Report) error {
	var b strings.Builder
	in := r.Ineligible
	ineligible := r.Records - r.EligibleRecords
	fmt.Fprintf(&b, "agent-rewind analyze: attested report (%s)\n", r.Kind)
	fmt.Fprintf(&b, "  source: %s, %d bytes, sha256 %s\n", r.Source.Format, r.Source.Bytes, r.Source.SHA256)
	fmt.Fprintf(&b, "  records: %d; eligible (replay candidates): %d\n", r.Records, r.EligibleRecords)
	if ineligible > 0 {
		fmt.Fprintf(&b, "  not eligible: %d (unsupported request %d, unknown origin %d, credential header %d, unknown header %d, invalid scope %d, unsuccessful status %d, missing body %d, provider state %d)\n",
			ineligible, in.UnsupportedRequest, in.UnknownOrigin, in.CredentialHeader, in.UnknownHeader, in.InvalidScope, in.UnsuccessfulStatus, in.MissingBody, in.ProviderState)
	}
	fmt.Fprintf(&b, "  distinct requests: %d\n", r.DistinctRequestKeys)
	fmt.Fprintf(&b, "  exact-repeat opportunities: %d\n", r.ExactRepeatOpportunities)
	fmt.Fprintf(&b, "  tokens in those repeats: %s", tokenLine(r.RepeatTokens))
	if r.RepeatsWithoutUsage > 0 {
		fmt.Fprintf(&b, "; %d repeats carried no usage", r.RepeatsWithoutUsage)
	}
	b.WriteString("\n")
	for _, api := range []struct {
		name string
		s    analyze.APIStats
	}{{string(analyze.APIMessages), r.APIs.Messages}, {string(analyze.APIResponses), r.APIs.Responses}, {string(analyze.APIChat), r.APIs.Chat}} {
		if api.s.EligibleRecords > 0 {
			fmt.Fprintf(&b, "  %s: %d eligible, %d exact-repeat opportunities, tokens %s\n", api.name, api.s.EligibleRecords, api.s.ExactRepeatOpportunities, tokenLine(api.s.RepeatTokens))
		}
	}
	fmt.Fprintf(&b, "  %s\n", r.Statement)
	_, err := io.WriteString(w, b.String())
	return err
}

// tokenLine is a Tokens total with its parts.
func tokenLine(t analyze.Tokens) string {
	line := fmt.Sprintf("%d (input %d, output %d, cache write %d, cache read %d", t.Total, t.Input, t.Output, t.CacheCreationInput, t.CacheReadInput)
	if t.ReasoningOutput > 0 {
		line += fmt.Sprintf(", of the output %d reasoning", t.ReasoningOutput)
	}
	return line + ")"
}

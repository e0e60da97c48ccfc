package command

import (
	"fmt"

	"github.com/agent-rewind/rewind/cacheplan"
)

// APIFlag is the --api flag of the commands that read request bodies. A body's API is
// detected from its shape; the flag says it for a body that fits more than one (user and
// assistant turns of plain text read the same in Anthropic Messages and Chat Completions).
type APIFlag struct {
	API string `name:"api" enum:"auto,anthropic-messages,openai-responses,openai-chat" default:"auto" help:"The API of the request body (bodies): auto (detect it from the shape), anthropic-messages, openai-responses or openai-chat."`
}

// format is the cacheplan format the flag names, "" to detect.
func (a APIFlag) format() cacheplan.Format {
	if a.API == "auto" {
		return ""
	}
	return cacheplan.Format(a.API)
}

// readAs says, for the text output, which API a body was read as and why.
func readAs(f cacheplan.Format, d cacheplan.Detection) string {
	switch d {
	case cacheplan.DetectedByShape:
		return string(f) + " (detected from its shape)"
	case cacheplan.DetectionGiven:
		return string(f) + " (as --api says)"
	case cacheplan.DetectionAssumed:
		return string(f) + " (assumed: nothing in it is only Anthropic's or only Chat Completions'; give --api openai-chat if it is a Chat Completions body)"
	}
	return string(f)
}

// unsupported is the error for a body in no format the commands read.
func unsupported(reason string) error {
	return fmt.Errorf("the request body was not read: %s; give --api to say which API it is for", reason)
}

package mcpserver

import (
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// textResult is a tool result whose content is the short text form. The SDK adds the structured
// form (structuredContent) from the handler's typed output.
func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// stamp formats a time for the text forms: UTC, to the second.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "(no time)"
	}
	return t.UTC().Format(time.RFC3339)
}

// humanBytes formats a byte count with a binary unit, e.g. "1.5 MiB".
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

package barrier

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// The refusal texts are written for the agent that receives them (on stderr for Claude Code and
// Codex, as agent_message for Cursor, in the MCP tool result): what was refused, why, and the one
// thing to do next. They name the key exactly as `agent-rewind release` takes it.

func refusalReason(code Code, req Request, fp string, r *Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "agent-rewind refused effect %s", quoteKey(r.Key))
	if d := req.Description; d != "" {
		fmt.Fprintf(&b, " (%s)", shorten(d, 160))
	}
	b.WriteString(": ")
	when := fmt.Sprintf("%s%s, while %s", r.FirstSeen.UTC().Format(time.RFC3339), chainRef(r.Seq), checkpointRef(r.Checkpoint))
	release := fmt.Sprintf("agent-rewind release %s --reason \"...\"", quoteKey(r.Key))
	switch code {
	case CodePayloadMismatch:
		fmt.Fprintf(&b, "this key was already used at %s for a different payload (%s, now %s; the key is %s). ", when, shortFP(r.Fingerprint), shortFP(fp), r.State)
		b.WriteString("A key names exactly one effect, so reusing it with other parameters is refused. ")
		b.WriteString("If you meant the same effect, repeat it with the original parameters (it will be refused as already done if it fired). ")
		b.WriteString("If this is a different effect, use a new key")
		if req.NewKeyHint != "" {
			b.WriteString(" (" + req.NewKeyHint + ")")
		}
		b.WriteString(".")
	case CodeSpent:
		fmt.Fprintf(&b, "it already fired at %s. ", when)
		b.WriteString("Rewinding the workspace does not undo external effects, so running it again would repeat it in the outside world. Do not retry it. ")
		b.WriteString("Only if a distinct new effect is really intended, use a new key")
		if req.NewKeyHint != "" {
			b.WriteString(" (" + req.NewKeyHint + ")")
		}
		b.WriteString("; if unsure, ask the user.")
	case CodePending:
		fmt.Fprintf(&b, "an earlier attempt was admitted at %s and its outcome is unknown: it may still be running, or it was stopped or denied before reporting back. ", when)
		b.WriteString("Reconcile first: check the external system for whether it happened. Do not retry it until then. ")
		fmt.Fprintf(&b, "If it did not happen (for example the user denied it at a permission prompt), the user can re-arm it with: %s", release)
	case CodeFailed:
		fmt.Fprintf(&b, "it was attempted at %s and failed", when)
		if e := lastReason(r, Failed); e != "" {
			fmt.Fprintf(&b, " (%s)", shorten(e, 200))
		}
		b.WriteString(". It stays refused so that a failure is never retried blindly: a failed call may still have had an external effect. ")
		fmt.Fprintf(&b, "Check the external system; to try again, the user re-arms it with: %s", release)
	}
	return b.String()
}

func chainRef(seq int64) string {
	if seq < 0 {
		return ""
	}
	return fmt.Sprintf(" (chain entry %d)", seq)
}

func checkpointRef(cp string) string {
	if cp == "" {
		return "no checkpoint was current"
	}
	return fmt.Sprintf("checkpoint %s was current", cp)
}

// lastReason returns the reason of the newest transition into state s.
func lastReason(r *Record, s State) string {
	for i := len(r.History) - 1; i >= 0; i-- {
		if r.History[i].To == s {
			return r.History[i].Reason
		}
	}
	return ""
}

// quoteKey quotes key for a POSIX shell when it holds anything beyond a safe set, so that the
// refusal's release command can be pasted as is.
func quoteKey(key string) string {
	safe := key != ""
	for _, r := range key {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:/@+=,", r)) {
			safe = false
			break
		}
	}
	if safe {
		return key
	}
	return "'" + strings.ReplaceAll(key, "'", `'\''`) + "'"
}

func shortFP(fp string) string {
	if len(fp) > len("sha256:")+12 {
		return fp[:len("sha256:")+12]
	}
	return fp
}

// shorten cuts s to at most n runes, on a rune boundary, marking the cut with an ellipsis, and
// folds newlines so that a reason stays one line.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + "…"
}

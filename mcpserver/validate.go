package mcpserver

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on tool inputs. They keep ids in the shape the snapshot module mints, keep labels and
// keys printable on one line, and bound what one call can write into the ledger or failure
// memory. Lengths are in characters (runes) except where a byte count is named.
const (
	// MaxIDLen is the longest checkpoint id: ids are short and stable (at most 12 characters)
	// and use ASCII letters, digits, '-' and '_'.
	MaxIDLen = 12
	// MaxToolCallIDLen is the longest tool call id rewind and replay accept in place of a
	// checkpoint id (a client's id of the call an automatic checkpoint was taken before).
	MaxToolCallIDLen = 256
	// MaxLabelLen is the longest checkpoint label.
	MaxLabelLen = 200
	// MaxKeyLen is the longest effect key, in bytes.
	MaxKeyLen = 256
	// MaxDescriptionLen is the longest effect description.
	MaxDescriptionLen = 500
	// MaxPayloadBytes is the largest effect payload, as JSON bytes.
	MaxPayloadBytes = 64 << 10
	// MaxNoteLen is the longest what_failed or lesson of a failure note.
	MaxNoteLen = 2000
)

// InputError is a tool input that is out of bounds. It becomes a tool error whose text names
// the argument, the offending value (shortened) and what a valid one looks like.
type InputError struct {
	Arg    string // the argument's name, as in the tool's input schema
	Value  string // the value received, shortened for display
	Reason string // what is wrong and what a valid value looks like
}

func (e *InputError) Error() string {
	return fmt.Sprintf("invalid %s %s: %s", e.Arg, e.Value, e.Reason)
}

func inputError(arg, value, reason string) *InputError {
	const show = 40
	if utf8.RuneCountInString(value) > show {
		r := []rune(value)
		value = string(r[:show]) + "…"
	}
	return &InputError{Arg: arg, Value: strconv.Quote(value), Reason: reason}
}

func validateID(arg, id string) error { return validateIDLen(arg, id, MaxIDLen) }

// validateRef checks the id of rewind and replay: a checkpoint id, or a tool call id.
func validateRef(arg, id string) error { return validateIDLen(arg, id, MaxToolCallIDLen) }

// PromptRef is how rewind names the state before a prompt's work: "prompt:N", N the prompt's
// number (a call's prompt in list starts with it).
const PromptRef = "prompt:"

// validateRewindRef checks rewind's id: a checkpoint or tool call id, or prompt:N.
func validateRewindRef(arg, id string) error {
	n, ok := strings.CutPrefix(id, PromptRef)
	if !ok {
		return validateRef(arg, id)
	}
	if len(n) == 0 || len(n) > 9 || n[0] == '0' || strings.Trim(n, "0123456789") != "" {
		return inputError(arg, id, "give prompt:N with N the number a call's prompt starts with in list (1 or more)")
	}
	return nil
}

func validateIDLen(arg, id string, max int) error {
	if id == "" {
		return inputError(arg, id, "a checkpoint id is required: use the id that checkpoint returned")
	}
	if len(id) > max {
		return inputError(arg, id, fmt.Sprintf("ids are at most %d characters: use the id that checkpoint or list returned", max))
	}
	for _, c := range []byte(id) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return inputError(arg, id, "checkpoint ids hold only letters, digits, '-' and '_': use the id that checkpoint returned, without quotes or spaces")
		}
	}
	return nil
}

func validateLabel(label string) error {
	return validateLine("label", label, MaxLabelLen, "shorten it")
}

// validateLine checks a one-line human text: valid UTF-8, no control characters, at most max
// characters.
func validateLine(arg, s string, max int, fix string) error {
	if !utf8.ValidString(s) {
		return inputError(arg, s, "it is not valid UTF-8")
	}
	if n := utf8.RuneCountInString(s); n > max {
		return inputError(arg, s, fmt.Sprintf("it has %d characters, at most %d are allowed: %s", n, max, fix))
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return inputError(arg, s, "it holds a control character (such as a newline or tab): use one line of plain text")
		}
	}
	return nil
}

// validateText checks a free text that may span lines: valid UTF-8, at most max characters,
// no control characters other than newline and tab.
func validateText(arg, s string, max int) error {
	if !utf8.ValidString(s) {
		return inputError(arg, s, "it is not valid UTF-8")
	}
	if n := utf8.RuneCountInString(s); n > max {
		return inputError(arg, s, fmt.Sprintf("it has %d characters, at most %d are allowed: summarise it", n, max))
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return inputError(arg, s, "it holds a control character: use plain text")
		}
	}
	return nil
}

func validateGuard(in GuardRequest) error {
	if in.Key == "" {
		return inputError("key", in.Key, "a key is required: name this one effect stably, e.g. \"deploy:prod:v42\" or \"email:invoice-1093\"")
	}
	if len(in.Key) > MaxKeyLen {
		return inputError("key", in.Key, fmt.Sprintf("it has %d bytes, at most %d are allowed: use a shorter stable name", len(in.Key), MaxKeyLen))
	}
	if err := validateLine("key", in.Key, MaxKeyLen, "use a shorter stable name"); err != nil {
		return err
	}
	if err := validateLine("description", in.Description, MaxDescriptionLen, "shorten it"); err != nil {
		return err
	}
	if len(in.Payload) > MaxPayloadBytes {
		return inputError("payload", string(in.Payload), fmt.Sprintf("it has %d bytes of JSON, at most %d are allowed: pass the parameters that identify the effect, not its data", len(in.Payload), MaxPayloadBytes))
	}
	if p := bytes.TrimSpace(in.Payload); len(p) > 0 && p[0] != '{' {
		// The input schema already says object; this guards direct callers of the handler.
		return inputError("payload", string(in.Payload), "it must be a JSON object")
	}
	return nil
}

func validateBacktrack(in BacktrackRequest) error {
	if err := validateID("id", in.ID); err != nil {
		return err
	}
	if in.WhatFailed == "" {
		return inputError("what_failed", in.WhatFailed, "say what was tried after the checkpoint and how it failed, so it is not tried again")
	}
	if err := validateText("what_failed", in.WhatFailed, MaxNoteLen); err != nil {
		return err
	}
	return validateText("lesson", in.Lesson, MaxNoteLen)
}

package barrier

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// ActionKind names what the guard must do with one input.
type ActionKind string

// The action kinds. Only ActAdmit, ActConfirm, ActFail and ActRelease touch the ledger.
const (
	ActNone    ActionKind = "none"    // nothing to decide: not an effect, or an event the guard does not act on
	ActAdmit   ActionKind = "admit"   // decide an effect: Ledger.Admit(Action.Request)
	ActConfirm ActionKind = "confirm" // Ledger.Confirm(Action.ToolUseID)
	ActFail    ActionKind = "fail"    // Ledger.Fail(Action.ToolUseID, Action.Reason, Action.Interrupt)
	ActRelease ActionKind = "release" // Ledger.ReleaseToolUse(Action.ToolUseID, Action.Reason)
)

// Action is what Plan decided an input asks for.
type Action struct {
	Kind ActionKind `json:"kind"`
	// Code, for ActNone, says why there is nothing to do: CodeNotEffect or CodeNotHandled.
	Code Code `json:"code,omitempty"`
	// Match is the rule match behind an ActAdmit of a hook input.
	Match *Match `json:"match,omitempty"`
	// Request is the admission to ask for (ActAdmit). The caller fills in Checkpoint.
	Request Request `json:"request"`
	// ToolUseID identifies the tool call to confirm, fail or release.
	ToolUseID string `json:"tool_use_id,omitempty"`
	// Reason is the failure text (ActFail) or the release reason (ActRelease).
	Reason string `json:"reason,omitempty"`
	// Interrupt tells, for ActFail, that the person interrupted the call.
	Interrupt bool `json:"interrupt,omitempty"`
	// By names the event for the record, e.g. "hook:claude-code PostToolUse".
	By string `json:"by,omitempty"`
}

// Plan decides what an input asks for, from the input and the rules alone: no I/O. What an
// event asks for is its role in the client's table (Client.Events). A deciding input that no
// rule classifies as an effect is ActNone with CodeNotEffect, which the guard answers at once
// without opening the ledger. An admission is pending (confirmable) when the client reports
// after the call by its id and the input carries one; else it is spent at once.
func (rs *Rules) Plan(in Input) (Action, error) {
	if in.Agent == AgentExplicit {
		return Action{Kind: ActAdmit, Request: Request{
			Key: in.Key, Payload: in.Payload, Description: in.Description, Source: "cli",
			NewKeyHint: `run the guard again with a new "key"`,
		}}, nil
	}
	c := in.Client()
	if c == nil {
		return Action{Kind: ActNone, Code: CodeNotHandled}, nil
	}
	by := "hook:" + string(in.Agent) + " " + in.Event
	role := c.Role(in.Event)
	if role == RoleDecide {
		return rs.planAdmit(in, c.confirms())
	}
	if in.ToolUseID == "" || !c.confirms() {
		return Action{Kind: ActNone, Code: CodeNotHandled}, nil // nothing names the call to pair
	}
	switch {
	case role == RoleFail, role == RoleConfirm && in.Error != "":
		return Action{Kind: ActFail, ToolUseID: in.ToolUseID, Reason: in.Error, Interrupt: in.IsInterrupt, By: by}, nil
	case role == RoleConfirm:
		return Action{Kind: ActConfirm, ToolUseID: in.ToolUseID, By: by}, nil
	case role == RoleRelease:
		reason := "the agent's permission system denied the call, so it never ran"
		if in.Reason != "" {
			reason += ": " + in.Reason
		}
		return Action{Kind: ActRelease, ToolUseID: in.ToolUseID, Reason: reason, By: by}, nil
	}
	return Action{Kind: ActNone, Code: CodeNotHandled}, nil
}

func (rs *Rules) planAdmit(in Input, confirmable bool) (Action, error) {
	m := rs.Classify(in)
	if m == nil {
		return Action{Kind: ActNone, Code: CodeNotEffect}, nil
	}
	req, err := requestFor(in, m)
	if err != nil {
		return Action{}, err
	}
	req.Confirmable = confirmable && in.ToolUseID != ""
	req.ToolUseID = in.ToolUseID
	req.Source = "hook:" + string(in.Agent)
	req.Rule = m.Rule
	return Action{Kind: ActAdmit, Match: m, Request: req}, nil
}

// requestFor derives the key, payload and description of a classified hook call.
//
// A shell effect's payload is {"commands": [[argv...], ...]}: the normalised simple commands
// that matched, so that quoting, spacing, redirections, pipes into other programs and
// REWIND_EFFECT_KEY do not change it. Its key is "shell:" + the first 32 hex digits of the
// SHA-256 of the canonical payload, or "shell:" + the REWIND_EFFECT_KEY value when the command
// names one.
//
// A tool effect's payload is its tool_input. Its key is the tool name, ":", and the first 32 hex
// digits of the SHA-256 of the canonical tool_input, or, with key fields, of the canonical
// object {field: value} of those fields (null where absent).
func requestFor(in Input, m *Match) (Request, error) {
	if m.Commands != nil {
		payload, err := json.Marshal(struct {
			Commands [][]string `json:"commands"`
		}{m.Commands})
		if err != nil {
			return Request{}, err
		}
		payload, err = Canonical(payload)
		if err != nil {
			return Request{}, err
		}
		key := "shell:" + shortHash(payload)
		hint := fmt.Sprintf("prefix the command with %s=<new-key>, a name for this distinct effect, e.g. %s=release-v2 git push", EffectKeyVar, EffectKeyVar)
		if m.Named {
			if m.EffectKey == "" {
				return Request{}, fmt.Errorf("%w: %s= is empty: give the effect a name, e.g. %s=release-v2", ErrInvalidKey, EffectKeyVar, EffectKeyVar)
			}
			key = "shell:" + m.EffectKey
			if err := validateKey(key); err != nil {
				return Request{}, fmt.Errorf("%s=%q: %w", EffectKeyVar, m.EffectKey, err)
			}
			hint = fmt.Sprintf("change the %s value to a new name", EffectKeyVar)
		}
		script, argv, _ := in.ShellCommand()
		if script == "" {
			script = strings.Join(argv, " ")
		}
		return Request{Key: key, Payload: payload, Description: shorten(script, 300), NewKeyHint: hint}, nil
	}

	ti, err := Canonical(in.ToolInput)
	if err != nil {
		return Request{}, fmt.Errorf("tool_input of %s: %w", in.ToolName, err)
	}
	keySource := ti
	hint := "the key comes from the call's arguments, so only a call with other arguments is a new effect; repeating this one needs the user to release it"
	if len(m.KeyFields) > 0 {
		if keySource, err = keyFields(ti, m.KeyFields); err != nil {
			return Request{}, fmt.Errorf("tool_input of %s: %w", in.ToolName, err)
		}
		hint = "give the call new values in its key fields (" + strings.Join(m.KeyFields, ", ") + ")"
	}
	desc := in.ToolName + " " + shorten(string(ti), 240)
	return Request{Key: in.ToolName + ":" + shortHash(keySource), Payload: ti, Description: desc, NewKeyHint: hint}, nil
}

// shortHash is the first 16 bytes (32 hex digits) of the SHA-256 of b: enough to never collide
// between effects, short enough to read in a refusal.
func shortHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// keyFields returns the canonical object of the named members of the canonical JSON object ti.
func keyFields(ti []byte, names []string) ([]byte, error) {
	var obj any
	dec := json.NewDecoder(bytes.NewReader(ti))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	sel := map[string]any{}
	for _, n := range names {
		var v any = obj
		for _, part := range strings.Split(n, ".") {
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = m[part]
		}
		sel[n] = v
	}
	b, err := json.Marshal(sel)
	if err != nil {
		return nil, err
	}
	return Canonical(b)
}

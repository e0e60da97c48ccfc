package mockmodel

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// gemini is Google's Gemini API (generativelanguage, v1beta): POST
// /v1beta/models/{model}:generateContent answers one JSON GenerateContentResponse, and
// :streamGenerateContent?alt=sse answers server-sent events, one GenerateContentResponse each
// ("data: {...}" and a blank line).
//
// Call ids. A Gemini functionCall may carry an id or none, and a client may replace it with one
// of its own (Gemini CLI 0.61.0 sends the model's id back, and assigns "<tool>_<ms>_<n>" to a
// call without one; internally, in its transcript, the id is "<tool>__<id>"). So that a Sequence can count its own calls
// whatever the client does, every functionCall the mock writes carries its id twice: as the
// functionCall's id and in the part's thoughtSignature, the opaque token a client must send back
// with the part unchanged. Reading the history, a call's ToolCall.ID is the id in its signature
// when the mock wrote it, else its own id (less a "<tool>__" prefix), else "gemini_<content>_<part>"
// from its position. A functionResponse is paired with the call whose own id it names; one that
// names none is paired in order with the first unanswered call of its name, the order Gemini
// documents for parallel calls. Its ToolResult.CallID is that call's ToolCall.ID.
//
// What the model reads of a result is the functionResponse's response object: Gemini CLI sends
// {"output": text} or {"error": text}; those are the result's Text (IsError for error), and any
// other response is its compact JSON.
type gemini struct{}

func init() {
	routes["POST /v1beta/models/{call}"] = gemini{}
}

// geminiRequest is the part of a GenerateContentRequest the mock reads.
type geminiRequest struct {
	Contents          []geminiContent `json:"contents"`
	SystemInstruction *geminiContent  `json:"systemInstruction"`
	Tools             []geminiTool    `json:"tools"`
}

type geminiContent struct {
	Role  string       `json:"role,omitempty"`
	Parts []geminiPart `json:"parts"`
}

type geminiPart struct {
	Text             string                  `json:"text,omitempty"`
	Thought          bool                    `json:"thought,omitempty"`
	ThoughtSignature string                  `json:"thoughtSignature,omitempty"`
	FunctionCall     *geminiFunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *geminiFunctionResponse `json:"functionResponse,omitempty"`
}

type geminiFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type geminiFunctionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

type geminiTool struct {
	FunctionDeclarations []struct {
		Name string `json:"name"`
	} `json:"functionDeclarations"`
}

// signaturePrefix marks a thoughtSignature the mock wrote: base64 of signaturePrefix + call id.
const signaturePrefix = "mockmodel:"

func (gemini) parse(r *http.Request, body []byte) (Conversation, error) {
	model, method, ok := strings.Cut(r.PathValue("call"), ":")
	if !ok || model == "" {
		return Conversation{}, fmt.Errorf("gemini: path %q names no model and method: want /v1beta/models/MODEL:generateContent or :streamGenerateContent", r.URL.Path)
	}
	c := Conversation{API: "gemini", Model: model}
	switch method {
	case "generateContent":
	case "streamGenerateContent":
		// Without alt=sse the API streams one JSON array; every genai SDK asks for events.
		if alt := r.URL.Query().Get("alt"); alt != "sse" {
			return c, fmt.Errorf("gemini: streamGenerateContent with alt=%q is not served: the mock streams server-sent events only (?alt=sse)", alt)
		}
		c.Stream = true
	default:
		return c, fmt.Errorf("gemini: method %q is not served: the mock answers generateContent and streamGenerateContent", method)
	}
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return c, fmt.Errorf("gemini: the body is not a GenerateContentRequest: %w", err)
	}
	if req.SystemInstruction != nil {
		c.System = geminiText(req.SystemInstruction.Parts)
	}
	for _, t := range req.Tools {
		for _, d := range t.FunctionDeclarations {
			c.Tools = append(c.Tools, d.Name)
		}
	}
	msgs, err := geminiHistory(req.Contents)
	if err != nil {
		return c, err
	}
	c.Messages = msgs
	return c, nil
}

// geminiHistory reads the contents into Messages, mapping call ids as the type's doc says.
func geminiHistory(contents []geminiContent) ([]Message, error) {
	var calls geminiCalls
	msgs := make([]Message, 0, len(contents))
	for ci, content := range contents {
		m := Message{Role: "user"}
		switch content.Role {
		case "model":
			m.Role = "assistant"
		case "user", "function", "":
		default:
			return nil, fmt.Errorf("gemini: contents[%d] has role %q: want \"user\" or \"model\"", ci, content.Role)
		}
		m.Text = geminiText(content.Parts)
		for pi, p := range content.Parts {
			if fc := p.FunctionCall; fc != nil {
				if fc.Name == "" {
					return nil, fmt.Errorf("gemini: contents[%d].parts[%d].functionCall has no name", ci, pi)
				}
				args := fc.Args
				if len(args) == 0 || string(args) == "null" {
					args = json.RawMessage("{}")
				}
				id := calls.add(fc, p.ThoughtSignature, fmt.Sprintf("gemini_%d_%d", ci, pi))
				m.ToolCalls = append(m.ToolCalls, ToolCall{ID: id, Name: fc.Name, Args: args})
			}
			if fr := p.FunctionResponse; fr != nil {
				text, isErr, err := responseText(fr.Response)
				if err != nil {
					return nil, fmt.Errorf("gemini: contents[%d].parts[%d].functionResponse: %w", ci, pi, err)
				}
				m.ToolResults = append(m.ToolResults, ToolResult{CallID: calls.answer(fr), Text: text, IsError: isErr})
			}
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// geminiCalls are the calls of a history so far, for pairing the responses with them.
type geminiCalls []*geminiCall

type geminiCall struct {
	own      string // the id the client sent (less a "<tool>__" prefix)
	id       string // its ToolCall.ID
	name     string
	answered bool
}

// add records a call and returns its ToolCall.ID: the id in the signature the mock wrote, else
// the call's own id, else byPosition.
func (cs *geminiCalls) add(fc *geminiFunctionCall, signature, byPosition string) string {
	c := &geminiCall{own: strings.TrimPrefix(fc.ID, fc.Name+"__"), name: fc.Name}
	c.id = cmp.Or(signatureID(signature), c.own, byPosition)
	*cs = append(*cs, c)
	return c.id
}

// answer returns the ToolCall.ID of the call a response is for: the call whose own id it names,
// else the first unanswered call of its name; with neither, the id it names ("" for none).
func (cs geminiCalls) answer(fr *geminiFunctionResponse) string {
	own := strings.TrimPrefix(fr.ID, fr.Name+"__")
	i := slices.IndexFunc(cs, func(c *geminiCall) bool { return own != "" && c.own == own })
	if i < 0 {
		i = slices.IndexFunc(cs, func(c *geminiCall) bool { return !c.answered && c.name == fr.Name })
	}
	if i < 0 {
		return own
	}
	cs[i].answered = true
	return cs[i].id
}

// geminiText joins the text parts, leaving out the model's thoughts.
func geminiText(parts []geminiPart) string {
	var texts []string
	for _, p := range parts {
		if p.Text != "" && !p.Thought {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// signatureID returns the call id in a thoughtSignature the mock wrote, "" for any other.
func signatureID(sig string) string {
	b, err := base64.StdEncoding.DecodeString(sig)
	if err != nil {
		return ""
	}
	id, ok := strings.CutPrefix(string(b), signaturePrefix)
	if !ok {
		return ""
	}
	return id
}

// responseText is what the model reads of a functionResponse's response (see the type's doc).
func responseText(resp json.RawMessage) (text string, isError bool, err error) {
	if len(resp) == 0 || string(resp) == "null" {
		return "", false, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(resp, &fields); err != nil {
		return "", false, fmt.Errorf("response is not a JSON object: %w", err)
	}
	var texts []string
	for _, key := range []string{"output", "error"} {
		raw, ok := fields[key]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			texts = nil // not Gemini CLI's shape: the whole object
			break
		}
		texts = append(texts, s)
		isError = isError || key == "error"
	}
	if texts == nil || len(texts) != len(fields) {
		var compact bytes.Buffer
		if err := json.Compact(&compact, resp); err != nil {
			return "", false, fmt.Errorf("response is not JSON: %w", err)
		}
		return compact.String(), false, nil
	}
	return strings.Join(texts, "\n"), isError, nil
}

// geminiResponse is a GenerateContentResponse: one candidate with the turn, and the usage.
type geminiResponse struct {
	Candidates    []geminiCandidate `json:"candidates"`
	UsageMetadata geminiUsage       `json:"usageMetadata"`
	ModelVersion  string            `json:"modelVersion"`
}

type geminiCandidate struct {
	Content      geminiContent `json:"content"`
	FinishReason string        `json:"finishReason"`
	Index        int           `json:"index"`
}

type geminiUsage struct {
	PromptTokenCount     int `json:"promptTokenCount"`
	CandidatesTokenCount int `json:"candidatesTokenCount"`
	TotalTokenCount      int `json:"totalTokenCount"`
}

func (gemini) write(w http.ResponseWriter, c *Conversation, t Turn) error {
	resp, err := geminiAnswer(c, t)
	if err != nil {
		return err
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return err
	}
	if !c.Stream {
		w.Header().Set("Content-Type", "application/json")
		_, err = w.Write(b)
		return err
	}
	// One event holds the whole turn: clients join the events' parts, so one is a valid stream.
	w.Header().Set("Content-Type", "text/event-stream")
	_, err = fmt.Fprintf(w, "data: %s\r\n\r\n", b)
	return err
}

// geminiAnswer is the GenerateContentResponse for the turn: its text, or its tool calls (each
// with its id in the functionCall and the thoughtSignature, as the type's doc says).
func geminiAnswer(c *Conversation, t Turn) (geminiResponse, error) {
	var parts []geminiPart
	out := len(t.Text)
	for _, call := range t.ToolCalls {
		if !json.Valid(call.Args) || !bytes.HasPrefix(bytes.TrimSpace(call.Args), []byte("{")) {
			return geminiResponse{}, errors.New("gemini: the script's call of " + call.Name + " has arguments that are not a JSON object: " + string(call.Args))
		}
		parts = append(parts, geminiPart{
			FunctionCall:     &geminiFunctionCall{ID: call.ID, Name: call.Name, Args: call.Args},
			ThoughtSignature: base64.StdEncoding.EncodeToString([]byte(signaturePrefix + call.ID)),
		})
		out += len(call.Name) + len(call.Args)
	}
	if len(parts) == 0 {
		parts = []geminiPart{{Text: t.Text}}
	}
	// Token counts as the rough 4 characters a token; clients only show and sum them.
	in := len(c.Raw)/4 + 1
	outTokens := out/4 + 1
	return geminiResponse{
		Candidates:    []geminiCandidate{{Content: geminiContent{Role: "model", Parts: parts}, FinishReason: "STOP"}},
		UsageMetadata: geminiUsage{PromptTokenCount: in, CandidatesTokenCount: outTokens, TotalTokenCount: in + outTokens},
		ModelVersion:  c.Model,
	}, nil
}

// Package mockmodel is a scripted model for driving real agent clients (Claude Code, Codex CLI,
// Gemini CLI, Cline, GitHub Copilot CLI) with no model and no network: an HTTP server on
// 127.0.0.1 that speaks the APIs those clients call (Anthropic Messages, OpenAI Responses and
// Chat Completions, Gemini generateContent; each as JSON and as server-sent events), reads
// every request into one neutral Conversation, asks a Script for the next Turn (tool calls or
// a final text), writes it back in that API's wire form, and logs the exchange, so a test can
// check what the client really sent the model: the tools it offered, the system prompt, and
// every tool result as the model reads it.
//
// Each API lives in a file of its own that registers its routes; the server, the neutral
// types and the scripts are shared.
package mockmodel

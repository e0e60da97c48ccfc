package snapshot

// RedactSecrets is the redaction of automatic checkpoints' labels (redact.go), for the other
// texts agents' hooks hand agent-rewind to keep (the prompt log, cli/internal/prompts), so
// that a prompt is redacted exactly as a command is.
func RedactSecrets(s string) string { return redactSecrets(s) }

package snapshot

import "strings"

// Redaction of a tool call's summary (docs/checkpoints.md, "What an automatic checkpoint
// records"). The summary of a shell call is its command, which goes into the checkpoint's
// label, its chain entry and calls.jsonl, and from there into every export of the chain: a
// secret typed into a command must not. This is best effort, by shape, for the common ways a
// secret reaches a command line; it never fails, and what it replaces becomes redactedMark.

// redactedMark replaces a secret's value.
const redactedMark = "***"

// secretPrefixes start tokens issued by well-known services (the prefix is kept, the rest goes).
var secretPrefixes = []string{
	"sk-", "sk_live_", "sk_test_", "rk_live_", "rk_test_", // OpenAI, Anthropic (sk-ant-), Stripe
	"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", // GitHub, GitLab
	"xoxb-", "xoxp-", "xoxa-", "xoxs-", "xapp-", // Slack
	"AKIA", "ASIA", "AIza", "npm_", "hf_", "pypi-", "eyJ", // AWS keys, Google, npm, Hugging Face, PyPI, JWTs
}

// minSecretTail is how many token characters must follow a prefix for it to count ("sk-learn" does not).
const minSecretTail = 12

// redactSecrets returns s, its words separated by single spaces, with likely secrets replaced:
// the value of a flag or a variable whose name says secret (--password x, --token=x,
// API_KEY=x, export GITHUB_TOKEN=x), of an Authorization, Cookie or *-Key header, after
// "Bearer", the password of a URL's user:pass@ and of curl's -u user:pass, a query
// parameter whose name says secret (?access_token=x), and tokens with a well-known prefix
// (sk-..., ghp_..., AKIA..., eyJ...).
func redactSecrets(s string) string {
	words := strings.Fields(s)
	for i := 0; i < len(words); i++ {
		pre, core, post := unquote(words[i])
		lower := strings.ToLower(core)
		next := func(whole bool) { // redact the word after this one
			if i+1 < len(words) {
				i++
				p, c, q := unquote(words[i])
				if !whole {
					if user, _, ok := strings.Cut(c, ":"); ok { // -u user:pass keeps the user
						words[i] = p + user + ":" + redactedMark + q
						return
					}
				}
				words[i] = p + redactedMark + q
			}
		}
		switch {
		case lower == "bearer":
			next(true)
			continue
		case strings.HasSuffix(core, ":") && !strings.ContainsAny(core, "=/") && secretName(lower[:len(lower)-1]): // a header: "Authorization: Bearer x"
			if i+1 < len(words) {
				if _, c, _ := unquote(words[i+1]); isScheme(c) {
					i++
				}
			}
			next(true)
			continue
		case lower == "-u" || lower == "--user" || lower == "--proxy-user":
			next(false)
			continue
		case strings.HasPrefix(core, "-"):
			name, value, eq := strings.Cut(strings.TrimLeft(core, "-"), "=")
			if !secretName(strings.ToLower(name)) || name == "" {
				break
			}
			if eq {
				if value != "" {
					words[i] = pre + core[:len(core)-len(value)] + redactedMark + post
				}
				continue
			}
			next(true)
			continue
		}
		words[i] = pre + redactWord(core) + post
	}
	return strings.Join(words, " ")
}

// redactWord redacts inside one word: NAME=value and query parameters whose name says secret,
// a URL's password, and tokens with a well-known prefix.
func redactWord(w string) string {
	if i := strings.Index(w, "://"); i >= 0 {
		host := i + 3
		end := strings.IndexAny(w[host:], "/?#")
		if end < 0 {
			end = len(w) - host
		}
		auth := w[host : host+end]
		if at := strings.LastIndexByte(auth, '@'); at >= 0 {
			if user, pass, ok := strings.Cut(auth[:at], ":"); ok && pass != redactedMark {
				w = w[:host] + user + ":" + redactedMark + w[host+at:]
			}
		}
	}
	// NAME=value: all of the value; else each name=value of a query (after '?', between '&').
	if name, value, ok := strings.Cut(w, "="); ok && !strings.ContainsAny(name, "?&/:") && secretName(strings.ToLower(name)) {
		if value == "" {
			return w
		}
		return name + "=" + redactedMark
	}
	var b strings.Builder
	for rest := w; ; {
		i := strings.IndexAny(rest, "?&")
		part := rest
		if i >= 0 {
			part = rest[:i]
		}
		if name, value, ok := strings.Cut(part, "="); ok && value != "" && secretName(strings.ToLower(name)) {
			part = name + "=" + redactedMark
		}
		b.WriteString(part)
		if i < 0 {
			break
		}
		b.WriteByte(rest[i])
		rest = rest[i+1:]
	}
	w = b.String()
	return redactPrefixed(w)
}

// redactPrefixed replaces what follows each well-known token prefix that starts w or follows a
// character that cannot be part of a token.
func redactPrefixed(w string) string {
	for _, prefix := range secretPrefixes {
		for from := 0; from < len(w); {
			j := strings.Index(w[from:], prefix)
			if j < 0 {
				break
			}
			j += from
			start := j + len(prefix)
			end := start
			for end < len(w) && tokenChar(w[end]) {
				end++
			}
			if (j == 0 || !tokenChar(w[j-1])) && end-start >= minSecretTail {
				w = w[:start] + redactedMark + w[end:]
				end = start + len(redactedMark)
			}
			from = end
			if from == j { // never loop in place
				from++
			}
		}
	}
	return w
}

// tokenChar reports whether b can be part of an API token.
func tokenChar(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '-' || b == '.'
}

// secretName reports whether a flag, variable, header or parameter name (in lower case) says it
// holds a secret.
func secretName(n string) bool {
	n = strings.Trim(n, "\"'$")
	for _, w := range []string{"password", "passwd", "secret", "token", "credential", "cookie", "apikey", "api-key", "api_key", "private-key", "private_key"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	if strings.Contains(n, "auth") && !strings.Contains(n, "author") {
		return true
	}
	for _, suffix := range []string{"key", "keys", "pass", "_pwd", "-pwd"} {
		if strings.HasSuffix(n, suffix) {
			return true
		}
	}
	return false
}

// isScheme reports whether w is an Authorization header's scheme, which is kept.
func isScheme(w string) bool {
	switch strings.ToLower(w) {
	case "bearer", "basic", "token", "digest":
		return true
	}
	return false
}

// unquote splits a word into its leading quotes, its core and its trailing quotes (and commas).
func unquote(w string) (pre, core, post string) {
	i := 0
	for i < len(w) && (w[i] == '"' || w[i] == '\'') {
		i++
	}
	j := len(w)
	for j > i && (w[j-1] == '"' || w[j-1] == '\'' || w[j-1] == ',') {
		j--
	}
	return w[:i], w[i:j], w[j:]
}

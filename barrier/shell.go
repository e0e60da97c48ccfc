package barrier

import "strings"

// This file splits a POSIX-shell command line into simple commands, well enough to find the
// programs it runs. It is not a shell: it does no expansion, and it cannot see into scripts,
// functions, aliases or variables ($CMD). It does handle what agents write every day: quoting,
// escapes, the operators && || ; | & and newlines, subshells ( ), redirections (removed, with
// their targets), here-documents (their bodies are skipped), comments, and command and process
// substitutions $( ) ` ` <( ) >( ), whose commands are scanned too.

// maxShellDepth bounds the recursion into substitutions and `sh -c` scripts.
const maxShellDepth = 8

// maxSimpleCommands bounds the commands one input can produce, so a pathological input stays
// cheap to classify.
const maxSimpleCommands = 4096

// splitScript returns the simple commands of script, each as its words after quote removal.
func splitScript(script string, depth int) [][]string {
	lx := lexer{s: script, depth: depth}
	lx.run()
	cmds := lx.cmds
	if depth < maxShellDepth {
		for _, sub := range lx.subs {
			if len(cmds) >= maxSimpleCommands {
				break
			}
			cmds = append(cmds, splitScript(sub, depth+1)...)
		}
	}
	if len(cmds) > maxSimpleCommands {
		cmds = cmds[:maxSimpleCommands]
	}
	return cmds
}

type lexer struct {
	s     string
	i     int
	depth int

	cmds [][]string // finished simple commands
	cur  []string   // words of the command being read
	subs []string   // bodies of substitutions, scanned after this level

	word   strings.Builder
	inWord bool // a word has started (possibly empty, as in '')

	skipNext     bool     // the next word is a redirection target
	heredocNext  bool     // the next word is a here-document delimiter
	heredocStrip bool     // that delimiter came from <<- (leading tabs stripped)
	heredocs     []string // delimiters whose bodies start at the next newline
	heredocTabs  []bool
}

func (lx *lexer) run() {
	for lx.i < len(lx.s) {
		if len(lx.cmds) >= maxSimpleCommands {
			return
		}
		c := lx.s[lx.i]
		switch c {
		case ' ', '\t', '\r':
			lx.endWord()
			lx.i++
		case '\n':
			lx.endWord()
			lx.endCommand()
			lx.i++
			lx.skipHeredocs()
		case ';', '&', '|':
			if c == '&' && lx.i+1 < len(lx.s) && lx.s[lx.i+1] == '>' { // &> and &>> redirect
				lx.endWord()
				lx.i++
				lx.redirect()
				continue
			}
			lx.endWord()
			lx.endCommand()
			lx.i++
			if lx.i < len(lx.s) && (lx.s[lx.i] == c || (c == '|' && lx.s[lx.i] == '&')) {
				lx.i++ // && || ;; |&
			}
		case '(', ')':
			lx.endWord()
			lx.endCommand()
			lx.i++
		case '<', '>':
			if lx.inWord && isDigits(lx.word.String()) { // 2>file, 0<file: the digits are an fd
				lx.word.Reset()
				lx.inWord = false
			}
			lx.endWord()
			if lx.i+1 < len(lx.s) && lx.s[lx.i+1] == '(' { // process substitution
				lx.i++
				body, end := matchParen(lx.s, lx.i+1)
				lx.subs = append(lx.subs, body)
				lx.inWord = true
				lx.word.WriteString(lx.s[lx.i-1 : end])
				lx.i = end
				continue
			}
			lx.redirect()
		case '\'':
			end := strings.IndexByte(lx.s[lx.i+1:], '\'')
			lx.inWord = true
			if end < 0 {
				lx.word.WriteString(lx.s[lx.i+1:])
				lx.i = len(lx.s)
			} else {
				lx.word.WriteString(lx.s[lx.i+1 : lx.i+1+end])
				lx.i += end + 2
			}
		case '"':
			lx.inWord = true
			lx.i++
			lx.doubleQuoted()
		case '\\':
			if lx.i+1 < len(lx.s) {
				if lx.s[lx.i+1] != '\n' { // backslash-newline joins lines
					lx.inWord = true
					lx.word.WriteByte(lx.s[lx.i+1])
				}
				lx.i += 2
			} else {
				lx.i++
			}
		case '$':
			lx.inWord = true
			lx.dollar()
		case '`':
			lx.inWord = true
			lx.backquote()
		case '#':
			if lx.inWord {
				lx.word.WriteByte(c)
				lx.i++
				continue
			}
			if nl := strings.IndexByte(lx.s[lx.i:], '\n'); nl >= 0 {
				lx.i += nl
			} else {
				lx.i = len(lx.s)
			}
		default:
			lx.inWord = true
			lx.word.WriteByte(c)
			lx.i++
		}
	}
	lx.endWord()
	lx.endCommand()
}

func (lx *lexer) endWord() {
	if !lx.inWord {
		return
	}
	w := lx.word.String()
	lx.word.Reset()
	lx.inWord = false
	switch {
	case lx.heredocNext:
		lx.heredocNext = false
		lx.heredocs = append(lx.heredocs, w)
		lx.heredocTabs = append(lx.heredocTabs, lx.heredocStrip)
	case lx.skipNext:
		lx.skipNext = false
	default:
		lx.cur = append(lx.cur, w)
	}
}

func (lx *lexer) endCommand() {
	if len(lx.cur) > 0 {
		lx.cmds = append(lx.cmds, lx.cur)
	}
	lx.cur = nil
	lx.skipNext = false
	lx.heredocNext = false
}

// redirect consumes a redirection operator at lx.i and arranges for its target to be dropped.
func (lx *lexer) redirect() {
	op := lx.s[lx.i]
	lx.i++
	if op == '<' && strings.HasPrefix(lx.s[lx.i:], "<<") { // <<< here-string: its word is data
		lx.i += 2
		lx.skipNext = true
		return
	}
	if op == '<' && lx.i < len(lx.s) && lx.s[lx.i] == '<' { // << or <<- here-document
		lx.i++
		lx.heredocStrip = false
		if lx.i < len(lx.s) && lx.s[lx.i] == '-' {
			lx.i++
			lx.heredocStrip = true
		}
		lx.heredocNext = true
		return
	}
	if lx.i < len(lx.s) && (lx.s[lx.i] == '>' || lx.s[lx.i] == '|' || (op == '<' && lx.s[lx.i] == '>')) {
		lx.i++ // >> >| <>
	}
	if lx.i < len(lx.s) && lx.s[lx.i] == '&' { // >&2, <&0, >&- duplicate a descriptor: no file
		lx.i++
		j := lx.i
		for j < len(lx.s) && (lx.s[j] >= '0' && lx.s[j] <= '9' || lx.s[j] == '-') {
			j++
		}
		if j > lx.i {
			lx.i = j
			return
		}
	}
	lx.skipNext = true
}

// skipHeredocs skips the bodies of the here-documents whose operators were on the line just
// ended, so that their text is not read as commands.
func (lx *lexer) skipHeredocs() {
	for k, delim := range lx.heredocs {
		for lx.i < len(lx.s) {
			nl := strings.IndexByte(lx.s[lx.i:], '\n')
			var line string
			if nl < 0 {
				line = lx.s[lx.i:]
				lx.i = len(lx.s)
			} else {
				line = lx.s[lx.i : lx.i+nl]
				lx.i += nl + 1
			}
			if lx.heredocTabs[k] {
				line = strings.TrimLeft(line, "\t")
			}
			if strings.TrimRight(line, "\r") == delim {
				break
			}
		}
	}
	lx.heredocs, lx.heredocTabs = lx.heredocs[:0], lx.heredocTabs[:0]
}

// doubleQuoted reads the rest of a double-quoted string, starting after the opening quote.
func (lx *lexer) doubleQuoted() {
	for lx.i < len(lx.s) {
		c := lx.s[lx.i]
		switch c {
		case '"':
			lx.i++
			return
		case '\\':
			if lx.i+1 < len(lx.s) && strings.IndexByte("\"\\$`\n", lx.s[lx.i+1]) >= 0 {
				if lx.s[lx.i+1] != '\n' {
					lx.word.WriteByte(lx.s[lx.i+1])
				}
				lx.i += 2
			} else {
				lx.word.WriteByte(c)
				lx.i++
			}
		case '$':
			lx.dollar()
		case '`':
			lx.backquote()
		default:
			lx.word.WriteByte(c)
			lx.i++
		}
	}
}

// dollar reads a $ expansion at lx.i into the word, queueing command substitutions.
func (lx *lexer) dollar() {
	start := lx.i
	lx.i++
	if lx.i >= len(lx.s) {
		lx.word.WriteByte('$')
		return
	}
	switch lx.s[lx.i] {
	case '(':
		if lx.i+1 < len(lx.s) && lx.s[lx.i+1] == '(' { // $(( arithmetic ))
			_, end := matchParen(lx.s, lx.i+1)
			if end < len(lx.s) && lx.s[end] == ')' {
				end++
			}
			lx.word.WriteString(lx.s[start:end])
			lx.i = end
			return
		}
		body, end := matchParen(lx.s, lx.i+1)
		lx.subs = append(lx.subs, body)
		lx.word.WriteString(lx.s[start:end])
		lx.i = end
	case '{':
		end := strings.IndexByte(lx.s[lx.i:], '}')
		if end < 0 {
			end = len(lx.s) - lx.i - 1
		}
		lx.word.WriteString(lx.s[start : lx.i+end+1])
		lx.i += end + 1
	default:
		lx.word.WriteByte('$')
	}
}

// backquote reads a `command substitution` at lx.i into the word, queueing its body.
func (lx *lexer) backquote() {
	start := lx.i
	lx.i++
	var body strings.Builder
	for lx.i < len(lx.s) && lx.s[lx.i] != '`' {
		if lx.s[lx.i] == '\\' && lx.i+1 < len(lx.s) {
			body.WriteByte(lx.s[lx.i+1])
			lx.i += 2
			continue
		}
		body.WriteByte(lx.s[lx.i])
		lx.i++
	}
	if lx.i < len(lx.s) {
		lx.i++ // the closing `
	}
	lx.subs = append(lx.subs, body.String())
	lx.word.WriteString(lx.s[start:lx.i])
}

// matchParen finds the ')' closing a '(' just before s[from], skipping quotes and nested
// parentheses. It returns the text between them and the index just past the ')' (len(s) when
// unclosed).
func matchParen(s string, from int) (body string, end int) {
	depth := 1
	for i := from; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '\'':
			if j := strings.IndexByte(s[i+1:], '\''); j >= 0 {
				i += j + 1
			} else {
				i = len(s)
			}
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return s[from:i], i + 1
			}
		}
	}
	return s[from:], len(s)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

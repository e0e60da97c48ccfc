package agentconfig

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Binaries are the absolute paths setup writes into a client's configuration: clients start
// hooks and MCP servers with a PATH of their own (a desktop app's, a daemon's), so a bare
// agent-rewind is not found there as it is in the person's shell.
type Binaries struct {
	Rewind string `json:"agentRewind"`     // agent-rewind: the MCP server, and the guard where Hook is missing
	Hook   string `json:"agentRewindHook"` // agent-rewind-hook, the guard's fast client ("" when not installed)
}

// HookOrRewind is what a hook runs: agent-rewind-hook, else agent-rewind (the same guard).
func (b Binaries) HookOrRewind() string {
	if b.Hook != "" {
		return b.Hook
	}
	return b.Rewind
}

// FindBinaries returns the running agent-rewind and the agent-rewind-hook beside it. The path
// kept is the one on PATH when PATH's agent-rewind is this very program (npm's global bin
// folder keeps its name across upgrades, where the file it links to may move); otherwise the
// program's own path.
func FindBinaries() (Binaries, error) {
	exe, err := os.Executable()
	if err != nil {
		return Binaries{}, fmt.Errorf("cannot tell where agent-rewind is: %w", err)
	}
	self := resolved(exe)
	rewind := exe
	if p, err := exec.LookPath("agent-rewind"); err == nil {
		if abs, err := filepath.Abs(p); err == nil && resolved(abs) == self {
			rewind = abs
		}
	}
	b := Binaries{Rewind: rewind}
	for _, dir := range []string{filepath.Dir(rewind), filepath.Dir(self)} {
		if p := filepath.Join(dir, "agent-rewind-hook"); Runnable(p) == nil {
			b.Hook = p
			break
		}
	}
	for _, p := range []string{b.Rewind, b.Hook} {
		if err := safePath(p); err != nil {
			return Binaries{}, err
		}
	}
	return b, nil
}

// resolved is path with its symlinks resolved (path itself when that fails).
func resolved(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return path
}

// Runnable says why path is not a program that can be started: missing, not a regular file,
// not executable (nil when it is).
func Runnable(path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s does not exist", path)
	case err != nil:
		return err
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", path)
	case st.Mode()&0o111 == 0:
		return fmt.Errorf("%s is not executable", path)
	}
	return nil
}

// safePath refuses a path that a hook's shell command line or JSON message could not carry as
// it is: quotes, backslashes, $, backquotes and control characters.
func safePath(p string) error {
	if p == "" {
		return nil
	}
	if i := strings.IndexAny(p, "'\"\\$`\n\r\t"); i >= 0 {
		return fmt.Errorf("the path %q holds %q, which hook command lines cannot carry safely: install agent-rewind in a folder whose path has none of ' \" \\ $ `", p, p[i])
	}
	return nil
}

// shellWord is p as one word of a POSIX shell command line.
func shellWord(p string) string {
	if strings.ContainsAny(p, " ;&|<>()*?[]#~{}!") {
		return "'" + p + "'"
	}
	return p
}

// Placeholders the shipped files hold, which setup fills in.
const (
	pluginHook    = "${CLAUDE_PLUGIN_ROOT}/bin/agent-rewind-hook"
	pluginRewind  = "${CLAUDE_PLUGIN_ROOT}/bin/agent-rewind"
	projectMarker = "/absolute/path/to/your/project"
	notOnPath     = "agent-rewind is not on PATH"
)

// filler fills the shipped files' commands in for one setup: the plugin's launchers and the
// bare program names become the absolute paths, the project placeholder the project's root.
type filler struct {
	bin  Binaries
	root string
}

// exec fills an exec-form command (a program path, run without a shell).
func (f filler) exec(cmd string) string {
	switch cmd {
	case pluginHook, "agent-rewind-hook":
		return f.bin.HookOrRewind()
	case pluginRewind, "agent-rewind":
		return f.bin.Rewind
	}
	return cmd
}

// arg fills one argument of an exec-form command or an MCP server.
func (f filler) arg(a string) string {
	if a == projectMarker {
		return f.root
	}
	return a
}

// shell fills a shell command line: each word agent-rewind or agent-rewind-hook (a command, or
// what command -v looks for) becomes the absolute path, and the message saying it is not on
// PATH says where it is not. Words inside quotes (messages, @agent-rewind/mcp) are left alone.
func (f filler) shell(line string) string {
	line = strings.ReplaceAll(line, notOnPath, "agent-rewind is not at "+f.bin.Rewind)
	var b strings.Builder
	for i := 0; i < len(line); {
		if !strings.HasPrefix(line[i:], "agent-rewind") || i > 0 && !wordStart(line[i-1]) {
			b.WriteByte(line[i])
			i++
			continue
		}
		name := "agent-rewind"
		if strings.HasPrefix(line[i:], "agent-rewind-hook") {
			name = "agent-rewind-hook"
		}
		end := i + len(name)
		if end < len(line) && !wordEnd(line[end]) {
			b.WriteByte(line[i])
			i++
			continue
		}
		path := f.bin.Rewind
		if name == "agent-rewind-hook" {
			path = f.bin.HookOrRewind()
		}
		b.WriteString(shellWord(path))
		i = end
	}
	return b.String()
}

func wordStart(c byte) bool {
	return c == ' ' || c == '\t' || c == ';' || c == '&' || c == '|' || c == '(' || c == '\n'
}
func wordEnd(c byte) bool {
	return c == ' ' || c == '\t' || c == ';' || c == '&' || c == '|' || c == ')' || c == '\n'
}

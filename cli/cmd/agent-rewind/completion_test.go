package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// completions are the cases every shell's script must answer: the words typed before the cursor
// (the last one is the word being completed) and candidates the answer must hold. The scripts are
// loaded as docs/install.md shows, with the binary under test as the agent-rewind on PATH.
var completions = []struct {
	words []string
	want  []string
}{
	{[]string{"agent-rewind", "ch"}, []string{"chain", "check", "checkpoint"}},
	{[]string{"agent-rewind", "chain", ""}, []string{"verify", "head", "prove", "export", "keygen", "recover"}},
	{[]string{"agent-rewind", "--json", "chain", "ve"}, []string{"verify"}},
	{[]string{"agent-rewind", "--state-dir", "/tmp", "hook-server", "s"}, []string{"status", "stop"}},
	{[]string{"agent-rewind", "rewind", "--"}, []string{"--dry-run", "--workspace", "--json"}},
	{[]string{"agent-rewind", "gateway", "keys", ""}, []string{"create", "list", "revoke"}},
	{[]string{"agent-rewind", "completion", ""}, []string{"bash", "zsh", "fish"}},
	{[]string{"agent-rewind", "help", "ga"}, []string{"gateway"}},
	{[]string{"agent-rewind", "--workspace", "proj"}, []string{"project"}},
}

// completionDir is a folder holding a folder "project", for the file name completions.
func completionDir(t *testing.T) string {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "project"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCompletionBash sources "agent-rewind completion bash" in a real bash, checks that it
// registers itself (complete -p), and asks its function for each case's candidates as bash's
// programmable completion would (COMP_WORDS, COMP_CWORD).
func TestCompletionBash(t *testing.T) {
	sh, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := completionDir(t)
	script := "source <(agent-rewind completion bash)" // docs/install.md, as written
	if out := shellOut(t, dir, sh, script+"; complete -p agent-rewind"); strings.TrimSpace(out) != "complete -F _agent_rewind agent-rewind" {
		t.Fatalf("complete -p agent-rewind: %q", out)
	}
	for _, c := range completions {
		var words strings.Builder
		for _, w := range c.words {
			words.WriteString(" '" + w + "'")
		}
		prog := script + "; COMP_WORDS=(" + words.String() + "); COMP_CWORD=" + strconv.Itoa(len(c.words)-1) + "; _agent_rewind; printf '%s\\n' \"${COMPREPLY[@]}\""
		checkCandidates(t, "bash", c.words, c.want, shellOut(t, dir, sh, prog), true)
	}
}

// TestCompletionZsh loads "agent-rewind completion zsh" in a real zsh (skipped where zsh is not
// installed) and runs its function as zsh's bash compatibility runs it.
func TestCompletionZsh(t *testing.T) {
	sh, err := exec.LookPath("zsh")
	if err != nil {
		t.Skip("zsh is not installed")
	}
	dir := completionDir(t)
	// One zsh for every case: compinit is most of its time. The script loads as docs/install.md says.
	prog := "autoload -U compinit && compinit -u -D; source <(agent-rewind completion zsh); setopt ksharrays"
	for _, c := range completions {
		var words strings.Builder
		for _, w := range c.words {
			words.WriteString(" '" + w + "'")
		}
		// bashcompinit's COMP_WORDS is 0-based, as bash's: ksharrays while the function runs.
		prog += "; COMPREPLY=(); COMP_WORDS=(" + words.String() + "); COMP_CWORD=" + strconv.Itoa(len(c.words)-1) + "; _agent_rewind; print -l -- \"${COMPREPLY[@]}\" '--case--'"
	}
	cases := strings.Split(shellOut(t, dir, sh, prog), "--case--\n")
	if len(cases) != len(completions)+1 {
		t.Fatalf("zsh answered %d cases, want %d:\n%s", len(cases)-1, len(completions), strings.Join(cases, "--case--\n"))
	}
	for i, c := range completions {
		// zsh's compadd, not compgen, narrows the candidates to the typed prefix there.
		checkCandidates(t, "zsh", c.words, c.want, cases[i], false)
	}
}

// TestCompletionFish loads "agent-rewind completion fish" in a real fish (skipped where fish is
// not installed) and asks fish itself for the completions of each command line (complete -C).
func TestCompletionFish(t *testing.T) {
	sh, err := exec.LookPath("fish")
	if err != nil {
		t.Skip("fish is not installed")
	}
	dir := completionDir(t)
	// Installed as docs/install.md says; fish loads it from there when agent-rewind is completed.
	shellOut(t, dir, sh, "-c", "mkdir -p ~/.config/fish/completions; agent-rewind completion fish > ~/.config/fish/completions/agent-rewind.fish")
	for _, c := range completions {
		var out strings.Builder
		line := strings.Join(c.words, " ")
		for _, cand := range strings.Split(shellOut(t, dir, sh, "-c", "complete -C '"+line+"'"), "\n") {
			out.WriteString(strings.SplitN(cand, "\t", 2)[0] + "\n") // fish adds a tab and a description
		}
		checkCandidates(t, "fish", c.words, c.want, out.String(), true)
	}
}

// shellOut runs a shell program in dir: bash and zsh take it after -c; fish's args are given.
func shellOut(t *testing.T, dir, sh string, args ...string) string {
	t.Helper()
	if len(args) == 1 {
		args = []string{"-c", args[0]}
	}
	cmd := exec.Command(sh, args...)
	cmd.Dir = dir
	// HOME is the test's folder (fish's ~/.config), and the binary under test is the agent-rewind on PATH.
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME=", "XDG_DATA_HOME="+filepath.Join(dir, "data"), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", sh, args, err, out)
	}
	return string(out)
}

// checkCandidates: every wanted candidate is offered and, where the script itself narrows them,
// nothing that does not start with the word being completed.
func checkCandidates(t *testing.T, shell string, words, want []string, out string, narrowed bool) {
	t.Helper()
	var got []string
	for _, g := range strings.Fields(out) {
		got = append(got, strings.TrimSuffix(g, "/")) // fish marks a folder
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s: %q completes to %q, which lacks %q", shell, strings.Join(words, " "), got, w)
		}
	}
	last := words[len(words)-1]
	for _, g := range got {
		if !narrowed {
			break
		}
		if !strings.HasPrefix(g, last) {
			t.Errorf("%s: %q offers %q, which does not start with %q", shell, strings.Join(words, " "), g, last)
		}
	}
}

package agents

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// ClientsVar names the folder the pinned clients are installed in (npm ci --prefix
// tools/agents/clients): the harness's tests skip without it, and fail when a client is
// missing from it.
const ClientsVar = "REWIND_AGENTS"

// HowToRun is what a skipped test says.
const HowToRun = ClientsVar + " is not set, so the real clients are not run: npm ci --prefix tools/agents/clients && " +
	ClientsVar + "=$PWD/tools/agents/clients go test ./tools/agents (from the repository root; .ci/run does this in a step of its own)"

// Env is one client run's world, all of it in a temporary folder: a home with the XDG folders,
// a project that is a git repository with one commit and a subfolder, a bare remote to push
// to, the built binaries on PATH, and an environment made from nothing but these (the test's
// own environment never reaches a client).
type Env struct {
	T       *testing.T
	Root    string // everything below is in here; removed after the test
	Home    string
	State   string // the state folder: every project's store (XDG_STATE_HOME/agent-rewind)
	Project string // the git repository the client works in
	Sub     string // Project/sub, a subfolder with a file
	Remote  string // a bare repository, the project's origin: `git push` is an external effect
	Shop    string // the shop server's effect log: one line per effect that really ran
	Bin     Binaries
	Clients string // the pinned clients' install folder (ClientsVar)

	vars  map[string]string
	trace string // the prefix of strace's output files, when TraceNetwork is on
}

// New makes a fresh Env, or skips the test when ClientsVar is unset.
func New(t *testing.T) *Env {
	t.Helper()
	clients := os.Getenv(ClientsVar)
	if clients == "" {
		t.Skip(HowToRun)
	}
	if !filepath.IsAbs(clients) {
		t.Fatalf("%s=%q: give the install folder as an absolute path, e.g. %s=$PWD/tools/agents/clients", ClientsVar, clients, ClientsVar)
	}
	bin, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	// A short root: the guard server's unix socket lives in the state folder, and socket paths
	// are limited to 108 bytes.
	root, err := os.MkdirTemp("", "agents-")
	if err != nil {
		t.Fatal(err)
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		t.Fatal(err)
	}
	e := &Env{T: t, Root: root, Home: filepath.Join(root, "home"), Bin: bin, Clients: clients,
		Project: filepath.Join(root, "shop"), Remote: filepath.Join(root, "remote.git"), Shop: filepath.Join(root, "shop-effects.jsonl")}
	e.Sub = filepath.Join(e.Project, "sub")
	// The XDG folders are not the defaults under HOME, so a client that hands a hook or an MCP
	// server only part of its environment shows up as a second store.
	xdg := map[string]string{"XDG_CONFIG_HOME": "config", "XDG_STATE_HOME": "state", "XDG_CACHE_HOME": "cache", "XDG_DATA_HOME": "data"}
	e.vars = map[string]string{
		"HOME": e.Home, "USER": "agent", "LOGNAME": "agent", "LANG": "C.UTF-8", "TERM": "dumb", "TZ": "UTC",
		"TMPDIR": filepath.Join(root, "tmp"), "SHELL": "/bin/sh",
		"GIT_CONFIG_NOSYSTEM": "1", "NO_COLOR": "1",
	}
	for k, v := range xdg {
		e.vars[k] = filepath.Join(root, v)
	}
	e.State = filepath.Join(e.vars["XDG_STATE_HOME"], "agent-rewind")
	t.Cleanup(e.cleanup)
	for _, d := range []string{e.Home, e.vars["TMPDIR"], e.vars["XDG_CONFIG_HOME"], e.vars["XDG_STATE_HOME"], e.vars["XDG_CACHE_HOME"], e.vars["XDG_DATA_HOME"], e.Sub} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	e.SetPath(true)
	e.WriteFile(filepath.Join(e.Home, ".gitconfig"), "[user]\n\tname = Agent\n\temail = agent@example.com\n[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n")
	e.WriteFile(filepath.Join(e.Project, "README.md"), "# shop\n")
	e.WriteFile(filepath.Join(e.Project, "app.txt"), "version 1\n")
	e.WriteFile(filepath.Join(e.Sub, "notes.txt"), "notes\n")
	e.Git(root, "init", "-q", "--bare", e.Remote)
	// The remote logs every push it receives: what the pushes that really ran delivered.
	hook := filepath.Join(e.Remote, "hooks", "post-receive")
	e.WriteFile(hook, "#!/bin/sh\ncat >> \"$(dirname \"$0\")/../pushes.log\"\n")
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	e.Git(e.Project, "init", "-q")
	e.Git(e.Project, "add", ".")
	e.Git(e.Project, "commit", "-qm", "initial")
	e.Git(e.Project, "remote", "add", "origin", e.Remote)
	return e
}

// cleanup stops the guard server the hooks started for this state folder, and removes the
// folder. Other processes a client left are its process group's, killed by Run.
func (e *Env) cleanup() {
	cmd := exec.Command(e.Bin.Rewind, "hook-server", "stop")
	cmd.Env = e.Environ()
	cmd.Run()
	if e.T.Failed() && os.Getenv("REWIND_AGENTS_KEEP") != "" {
		e.T.Logf("kept %s (REWIND_AGENTS_KEEP)", e.Root)
		return
	}
	os.RemoveAll(e.Root)
}

// For returns the Env for a subtest: the same world, failures reported to t.
func (e *Env) For(t *testing.T) *Env {
	c := *e
	c.T = t
	return &c
}

// Set sets a variable of the clients' environment ("" removes it).
func (e *Env) Set(name, value string) {
	if value == "" {
		delete(e.vars, name)
		return
	}
	e.vars[name] = value
}

// Get returns a variable of the clients' environment.
func (e *Env) Get(name string) string { return e.vars[name] }

// SetPath sets PATH: the binaries' folder (when withBinary), the clients', and the system's
// folders that hold node and git. Without the binary, nothing on PATH may be agent-rewind.
func (e *Env) SetPath(withBinary bool) {
	var dirs []string
	if withBinary {
		dirs = append(dirs, e.Bin.Dir)
	}
	dirs = append(dirs, filepath.Join(e.Clients, "node_modules", ".bin"))
	for _, prog := range []string{"node", "git"} {
		if p, err := exec.LookPath(prog); err == nil && !slices.Contains(dirs, filepath.Dir(p)) {
			dirs = append(dirs, filepath.Dir(p))
		}
	}
	for _, d := range []string{"/usr/local/bin", "/usr/bin", "/bin"} {
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	e.vars["PATH"] = strings.Join(dirs, string(os.PathListSeparator))
	if !withBinary {
		for _, d := range dirs {
			for _, name := range []string{"agent-rewind", "agent-rewind-hook"} {
				if _, err := os.Stat(filepath.Join(d, name)); err == nil {
					e.T.Fatalf("%s is installed in %s: a run without the binary cannot be made on this machine", name, d)
				}
			}
		}
	}
}

// Environ returns the clients' environment, sorted.
func (e *Env) Environ() []string {
	var env []string
	for k, v := range e.vars {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}

// Client returns the path of a pinned client's executable, failing the test when it is not
// installed.
func (e *Env) Client(name string) string {
	e.T.Helper()
	p := filepath.Join(e.Clients, "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		e.T.Fatalf("client %s is not installed in %s=%s: run npm ci --prefix tools/agents/clients (%v)", name, ClientsVar, e.Clients, err)
	}
	return p
}

// WriteFile writes a file, making its folder.
func (e *Env) WriteFile(path, content string) {
	e.T.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		e.T.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		e.T.Fatal(err)
	}
}

// ReadFile returns a file's content ("" when it does not exist).
func (e *Env) ReadFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		e.T.Fatal(err)
	}
	return string(b)
}

// Git runs git in dir with the clients' environment and fails the test when it fails.
func (e *Env) Git(dir string, args ...string) string {
	e.T.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, e.Environ()
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.T.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// Pushes returns the ref updates the remote received, one "OLD NEW REF" line each: what the
// pushes that really ran delivered.
func (e *Env) Pushes() []string {
	var lines []string
	for _, l := range strings.Split(e.ReadFile(filepath.Join(e.Remote, "pushes.log")), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// fileExists reports whether path exists.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// CopyIntegration copies every file of integrations/<name> into dir, keeping the folders and
// modes: "copy both folders into the project", as docs/agents.md says for VS Code's.
func (e *Env) CopyIntegration(name, dir string) []string {
	e.T.Helper()
	root, err := RepoRoot()
	if err != nil {
		e.T.Fatal(err)
	}
	src := filepath.Join(root, "integrations", name)
	var copied []string
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		copied = append(copied, filepath.ToSlash(rel))
		return os.WriteFile(dst, b, info.Mode().Perm())
	})
	if err != nil {
		e.T.Fatalf("copy integrations/%s into %s: %v", name, dir, err)
	}
	return copied
}

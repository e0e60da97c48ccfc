package main

import (
	"debug/elf"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestReleaseOffline makes a release of this tree in a temporary clone (tag: go.mod rewrites,
// commit, tags), serves its modules from a file proxy, and uses them as a consumer would, with
// GOWORK=off in fresh modules: hashchain and tape each at the version, downloading nothing but
// their own dependencies, and go install of the CLI at the version, whose version command says it.
// Third-party modules come from this machine's module cache (a file proxy too), then upstream.
func TestReleaseOffline(t *testing.T) {
	endToEnd(t)
	const version = "v0.9.0" // not the version the tree requires, so the rewrite is exercised
	tmp := t.TempDir()
	clone := gitClone(t, tmp)
	proxy := filepath.Join(tmp, "proxy")
	modcache := strings.TrimSpace(runCmd(t, "", nil, "go", "env", "GOMODCACHE"))
	upstream := "file://" + filepath.ToSlash(filepath.Join(modcache, "cache", "download")) + "," + strings.TrimSpace(runCmd(t, "", nil, "go", "env", "GOPROXY"))

	var log strings.Builder
	tags, err := Tag(t.Context(), TagOptions{Root: clone, Version: version, Proxy: proxy, NoVet: true, Log: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	// Deps first: internal before hashchain, hashchain before cli.
	at := func(tag string) int { return slices.Index(tags, tag) }
	if at("internal/"+version) < 0 || at("internal/"+version) > at("hashchain/"+version) || at("hashchain/"+version) > at("cli/"+version) {
		t.Fatalf("tags not in dependency order: %v", tags)
	}
	made := strings.Fields(runCmd(t, clone, nil, "git", "tag", "--list"))
	if !slices.Equal(sorted(made), sorted(tags)) {
		t.Fatalf("git tags %v, want %v", made, tags)
	}
	for _, name := range []string{"hashchain/go.mod", "cli/go.mod", "go.work"} {
		b, _ := os.ReadFile(filepath.Join(clone, name))
		if strings.Contains(name, "go.mod") && strings.Contains(string(b), "replace") {
			t.Fatalf("%s keeps a replace directive:\n%s", name, b)
		}
		if !strings.Contains(string(b), "agent-rewind/rewind/internal "+version) {
			t.Fatalf("%s does not require internal at %s:\n%s", name, version, b)
		}
	}
	if st := runCmd(t, clone, nil, "git", "status", "--porcelain"); st != "" {
		t.Fatalf("the release left uncommitted changes:\n%s", st)
	}

	// A consumer: a fresh module, a fresh module cache, our modules only from the proxy.
	consumer := func(name, mainGo string) (dir string, env []string) {
		dir = filepath.Join(tmp, name)
		env = append(ConsumerEnv(proxy, upstream), "GOMODCACHE="+filepath.Join(tmp, name+"-modcache"), "GOFLAGS=-mod=mod -modcacherw", "GOBIN="+filepath.Join(tmp, "bin"))
		if mainGo != "" {
			if err := writeFile(filepath.Join(dir, "main.go"), []byte(mainGo), 0o644); err != nil {
				t.Fatal(err)
			}
		} else if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		runCmd(t, dir, env, "go", "mod", "init", "example.com/"+name)
		return dir, env
	}
	for _, c := range []struct {
		name, module, mainGo, want string
		deps                       []string // modules whose zips may be downloaded
	}{
		{"hashchain-consumer", "hashchain", `package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/agent-rewind/rewind/hashchain"
)

func main() {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("consumer-%d.jsonl", os.Getpid()))
	defer os.Remove(path)
	c, err := hashchain.Open(path, hashchain.Options{Create: true})
	if err != nil {
		panic(err)
	}
	for i := range 3 {
		if _, err := c.Append("note", map[string]int{"i": i}); err != nil {
			panic(err)
		}
	}
	c.Close()
	r, err := hashchain.VerifyFile(path, hashchain.VerifyOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("verified %d entries\n", r.Size)
}
`, "verified 3 entries", []string{"github.com/agent-rewind/rewind/hashchain", "github.com/agent-rewind/rewind/internal", "golang.org/x/mod"}},
		{"tape-consumer", "tape", `package main

import (
	"fmt"

	"github.com/agent-rewind/rewind/tape"
)

func main() { fmt.Println(tape.RequestHash(tape.Request{}, nil).String()[:7]) }
`, "sha256:", []string{"github.com/agent-rewind/rewind/tape", "github.com/agent-rewind/rewind/internal", "github.com/ncruces/go-sqlite3", "github.com/ncruces/go-sqlite3-wasm/v6", "github.com/ncruces/julianday", "golang.org/x/sys"}},
	} {
		dir, env := consumer(c.name, c.mainGo)
		runCmd(t, dir, env, "go", "get", modulePrefix+c.module+"@"+version)
		if out := runCmd(t, dir, env, "go", "run", "."); !strings.Contains(out, c.want) {
			t.Fatalf("%s printed %q, want %q", c.name, out, c.want)
		}
		got := extracted(t, filepath.Join(tmp, c.name+"-modcache"))
		for _, m := range got {
			if !slices.Contains(c.deps, m) {
				t.Errorf("%s: go get %s@%s downloaded %s, which is not its dependency (downloaded: %v)", c.name, c.module, version, m, got)
			}
		}
	}

	// go install of the CLI at the version, as docs/install.md shows it: CGO_ENABLED=0, which
	// makes the binaries static (the go command's default links the C library where a C compiler is).
	dir, env := consumer("install", "")
	env = append(env, "CGO_ENABLED=0")
	runCmd(t, dir, env, "go", "install", modulePrefix+"cli/cmd/agent-rewind@"+version)
	var v VersionReport
	if err := json.Unmarshal([]byte(runCmd(t, dir, nil, filepath.Join(tmp, "bin", "agent-rewind"), "--json", "version")), &v); err != nil || v.Version != version {
		t.Fatalf("installed agent-rewind reports version %q (%v), want %s", v.Version, err, version)
	}
	// And the hook binary, as docs/install.md shows: it runs only the guard, and says so.
	runCmd(t, dir, env, "go", "install", modulePrefix+"cli/cmd/agent-rewind-hook@"+version)
	hook := exec.Command(filepath.Join(tmp, "bin", "agent-rewind-hook"), "version")
	out, err := hook.CombinedOutput()
	var xe *exec.ExitError
	// It names the same release as agent-rewind version (it once said devel).
	if !errors.As(err, &xe) || xe.ExitCode() != 2 || !strings.HasPrefix(string(out), "agent-rewind-hook "+version+": usage: ") {
		t.Fatalf("installed agent-rewind-hook version: %v\n%s\nwant exit 2 and its usage, naming %s", err, out, version)
	}
	if runtime.GOOS == "linux" {
		for _, name := range []string{"agent-rewind", "agent-rewind-hook"} {
			if interp := elfInterpreter(t, filepath.Join(tmp, "bin", name)); interp != "" {
				t.Errorf("go install'd %s is dynamically linked (interpreter %s), want static", name, interp)
			}
		}
	}
}

// elfInterpreter is the dynamic loader an ELF executable names (PT_INTERP), "" for a static one.
func elfInterpreter(t *testing.T, path string) string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				t.Fatal(err)
			}
			return strings.TrimRight(string(b), "\x00")
		}
	}
	return ""
}

// VersionReport is the part of "agent-rewind --json version" this test reads.
type VersionReport struct {
	Version string `json:"version"`
}

// extracted lists the modules whose source a module cache holds (folders path@version).
func extracted(t *testing.T, modcache string) []string {
	t.Helper()
	var mods []string
	err := filepath.WalkDir(modcache, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(modcache, p)
		if d.IsDir() && rel == "cache" {
			return filepath.SkipDir
		}
		if d.IsDir() && strings.Contains(d.Name(), "@") {
			mods = append(mods, filepath.ToSlash(rel[:strings.LastIndex(rel, "@")]))
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return mods
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// runCmd runs a command in dir (with env, if not nil) and returns its standard output.
func runCmd(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, stderr.String())
	}
	return string(out)
}

// TestTagDryRunAndDirty: -dry-run checks and prints the tags in dependency order but changes
// nothing; a checkout with uncommitted changes is refused, naming them.
func TestTagDryRunAndDirty(t *testing.T) {
	clone := gitClone(t, t.TempDir())
	head := runCmd(t, clone, nil, "git", "rev-parse", "HEAD")
	var log strings.Builder
	tags, err := Tag(t.Context(), TagOptions{Root: clone, Version: "v0.9.0", DryRun: true, NoVet: true, Log: &log})
	if err != nil || !strings.Contains(log.String(), "hashchain/v0.9.0") || !strings.Contains(log.String(), "dry run") || len(tags) == 0 {
		t.Fatalf("dry run: %v %v\n%s", tags, err, log.String())
	}
	if runCmd(t, clone, nil, "git", "rev-parse", "HEAD") != head || runCmd(t, clone, nil, "git", "status", "--porcelain") != "" || runCmd(t, clone, nil, "git", "tag", "--list") != "" {
		t.Fatal("a dry run changed the checkout")
	}
	if err := os.WriteFile(filepath.Join(clone, "hashchain", "stray.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Tag(t.Context(), TagOptions{Root: clone, Version: "v0.9.0", NoVet: true, Log: &log}); err == nil || !strings.Contains(err.Error(), "stray.txt") {
		t.Fatalf("a dirty checkout: %v", err)
	}
	// An untidy module (a requirement nothing imports) is refused before anything is written.
	os.Remove(filepath.Join(clone, "hashchain", "stray.txt"))
	runCmd(t, filepath.Join(clone, "hashchain"), nil, "go", "mod", "edit", "-require=golang.org/x/sync@v0.24.0")
	runCmd(t, clone, nil, "git", "commit", "-q", "-am", "untidy")
	if _, err := Tag(t.Context(), TagOptions{Root: clone, Version: "v0.9.0", DryRun: true, NoVet: true, Log: &log}); err == nil || !strings.Contains(err.Error(), "not tidy: hashchain") {
		t.Fatalf("an untidy module: %v", err)
	}
	if err := CheckVersion("0.9"); err == nil {
		t.Fatal("a version without v accepted")
	}
}

package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// registry serves the packed tarballs as an npm registry does (a packument per package name, the
// tarball at the address it names), for the commands the docs show with a package name; any other
// name is not found, as the platform packages this run did not build are.
func registry(t *testing.T, tarballs []string) string {
	t.Helper()
	type entry struct {
		manifest map[string]any
		data     []byte
	}
	pkgs := map[string]entry{}
	for _, tgz := range tarballs {
		data, err := os.ReadFile(tgz)
		if err != nil {
			t.Fatal(err)
		}
		m := packageJSON(t, tgz)
		pkgs[m["name"].(string)] = entry{m, data}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, _ := url.PathUnescape(strings.TrimPrefix(r.URL.EscapedPath(), "/"))
		if name, ok := strings.CutPrefix(path, "-/tarball/"); ok {
			if e, ok := pkgs[name]; ok {
				w.Write(e.data)
				return
			}
		}
		e, ok := pkgs[path]
		if !ok {
			http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
			return
		}
		v := e.manifest["version"].(string)
		sha := sha1.Sum(e.data)
		sum := sha512.Sum512(e.data)
		m := map[string]any{}
		for k, val := range e.manifest {
			m[k] = val
		}
		m["_id"] = path + "@" + v
		m["dist"] = map[string]any{"tarball": "http://" + r.Host + "/-/tarball/" + url.PathEscape(path),
			"shasum": fmt.Sprintf("%x", sha), "integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum[:])}
		if _, scripts := e.manifest["scripts"]; scripts {
			m["hasInstallScript"] = true
		}
		json.NewEncoder(w).Encode(map[string]any{"name": path, "dist-tags": map[string]string{"latest": v}, "versions": map[string]any{v: m}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// packageJSON reads package/package.json out of an npm tarball.
func packageJSON(t *testing.T, tgz string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(tarballFile(t, tgz, "package/package.json"), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// tarballFile reads the file name (package/...) out of an npm tarball.
func tarballFile(t *testing.T, tgz, name string) []byte {
	t.Helper()
	f, err := os.Open(tgz)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s: no %s (%v)", tgz, name, err)
		}
		if h.Name == name {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}

// TestNPMCommandsAsDocumented runs README.md's and docs/install.md's npm commands as written
// against a registry stand-in serving this tree's packages: npm install -g (both binaries on PATH,
// native), the install with --allow-scripts that npm 11.16+ asks for (no allowScripts warning), and
// the uninstall that also removes the agent-rewind-hook link npm leaves (no dangling link).
func TestNPMCommandsAsDocumented(t *testing.T) {
	n := installNPM(t)
	reg := registry(t, n.tarballs)
	for _, c := range []struct{ name, install string }{
		{"readme", "npm install -g @agent-rewind/mcp"},
		{"allow-scripts", "npm install -g --allow-scripts=@agent-rewind/mcp @agent-rewind/mcp"},
	} {
		t.Run(c.name, func(t *testing.T) {
			prefix := filepath.Join(t.TempDir(), "global")
			env := append(append([]string{}, n.env...), "npm_config_registry="+reg, "npm_config_offline=false", "npm_config_prefix="+prefix,
				"PATH="+filepath.Join(prefix, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
			sh := func(line string) string {
				t.Helper()
				cmd := exec.Command("sh", "-c", line)
				cmd.Dir, cmd.Env = t.TempDir(), env
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s: %v\n%s", line, err, out)
				}
				return string(out)
			}
			out := sh(c.install)
			warned := strings.Contains(out, "not yet covered by allowScripts")
			t.Logf("%s (npm %s): allowScripts warning %v", c.install, strings.TrimSpace(sh("npm --version")), warned)
			if c.name == "allow-scripts" && warned {
				t.Errorf("%s still warns:\n%s", c.install, out)
			}
			for _, name := range []string{"agent-rewind", "agent-rewind-hook"} {
				path := filepath.Join(prefix, "bin", name)
				if startsWith(t, path, "#!") {
					t.Errorf("%s is the node launcher after %s:\n%s", path, c.install, out)
				}
			}
			if v := sh("agent-rewind --json version"); !strings.Contains(v, `"version": "v0.3.0-test.1"`) {
				t.Errorf("agent-rewind --json version: %s", v)
			}
			sh(`npm uninstall -g @agent-rewind/mcp && rm -f "$(npm prefix -g)/bin/agent-rewind-hook"`) // docs/install.md
			if left, _ := os.ReadDir(filepath.Join(prefix, "bin")); len(left) != 0 {
				t.Errorf("after the documented uninstall, %s holds %v", filepath.Join(prefix, "bin"), left)
			}
		})
	}
}

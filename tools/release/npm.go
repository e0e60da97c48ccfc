package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

const (
	npmMain      = "@agent-rewind/mcp" // the package users name: npx -y @agent-rewind/mcp mcp
	npmLicense   = "FSL-1.1-ALv2"
	devVersion   = "0.0.0-dev" // the version written in npm/mcp/package.json; a release replaces it
	npmRepoURL   = "git+https://github.com/agent-rewind/rewind.git"
	mainTemplate = "npm/mcp" // the main package's files, relative to the repository root
)

// NPMVersion is the npm version of a Go release version: v0.3.0 is 0.3.0.
func NPMVersion(goVersion string) string { return strings.TrimPrefix(goVersion, "v") }

// platformPackage is the package.json of the package carrying one platform's binary. npm
// installs it only where os and cpu match (it is an optional dependency of the main package).
type platformPackage struct {
	Name            string            `json:"name"`
	Version         string            `json:"version"`
	Description     string            `json:"description"`
	License         string            `json:"license"`
	Repository      map[string]string `json:"repository"`
	OS              []string          `json:"os"`
	CPU             []string          `json:"cpu"`
	PreferUnplugged bool              `json:"preferUnplugged"` // yarn: keep the binary a real file
	Files           []string          `json:"files"`
}

// Pack writes the npm packages for bins (one per target, and the main package depending on
// every release platform) under o.Out/npm and packs each with npm pack. It returns the tarballs, the
// main package's first.
func Pack(ctx context.Context, o Options, bins map[Target]Binaries) ([]string, error) {
	version := NPMVersion(o.Version)
	stage := filepath.Join(o.Out, "npm")
	if err := os.RemoveAll(stage); err != nil {
		return nil, err
	}
	license, err := os.ReadFile(filepath.Join(o.Root, "LICENSE"))
	if err != nil {
		return nil, err
	}

	// The main package: the files of npm/mcp with the version filled in. It names every release
	// platform, whichever of them this run builds.
	mainDir := filepath.Join(stage, "mcp")
	var want []string
	for _, t := range Targets {
		want = append(want, npmMain+"-"+t.NPMPlatform())
	}
	if err := stageMain(filepath.Join(o.Root, mainTemplate), mainDir, version, want, license); err != nil {
		return nil, err
	}
	dirs := []string{mainDir}

	for _, t := range o.Targets {
		dir := filepath.Join(stage, t.NPMPlatform())
		pkg := platformPackage{
			Name:            npmMain + "-" + t.NPMPlatform(),
			Version:         version,
			Description:     fmt.Sprintf("The agent-rewind %s binaries for %s, installed by %s.", o.Version, t, npmMain),
			License:         npmLicense,
			Repository:      map[string]string{"type": "git", "url": npmRepoURL},
			OS:              []string{t.NPMOS()},
			CPU:             []string{t.NPMCPU()},
			PreferUnplugged: true,
			Files:           []string{"bin/" + ProgramName("agent-rewind", t), "bin/" + ProgramName("agent-rewind-hook", t), "LICENSE", "README.md"},
		}
		readme := fmt.Sprintf("# %s\n\nThe native agent-rewind and agent-rewind-hook binaries for %s. Install %s instead: it depends on this package where it fits.\n", pkg.Name, t, npmMain)
		if err := stagePlatform(dir, t, pkg, bins[t], license, readme); err != nil {
			return nil, err
		}
		dirs = append(dirs, dir)
	}

	var tarballs []string
	for _, dir := range dirs {
		tgz, err := npmPack(ctx, dir, o.Out)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(o.Log, "release: packed %s\n", tgz)
		tarballs = append(tarballs, tgz)
	}
	return tarballs, nil
}

// stageMain copies the main package to dir with every 0.0.0-dev made version, and checks that its
// optionalDependencies are exactly the platform packages built, at that version.
func stageMain(src, dir, version string, platforms []string, license []byte) error {
	for _, f := range []string{"package.json", "launcher.js", "platform.js", "install.js", "README.md", "bin/agent-rewind", "bin/agent-rewind-hook"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return err
		}
		perm := os.FileMode(0o644)
		if f == "package.json" {
			b = bytes.ReplaceAll(b, []byte(devVersion), []byte(version))
		}
		if strings.HasPrefix(f, "bin/") {
			perm = 0o755
		}
		if err := writeFile(filepath.Join(dir, f), b, perm); err != nil {
			return err
		}
	}
	var pkg struct {
		Name, Version, License string
		Optional               map[string]string `json:"optionalDependencies"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "package.json"))
	if err := json.Unmarshal(b, &pkg); err != nil {
		return fmt.Errorf("%s/package.json: %v", src, err)
	}
	deps := slices.Sorted(maps.Keys(pkg.Optional))
	if pkg.Name != npmMain || pkg.Version != version || pkg.License != npmLicense || !slices.Equal(deps, slices.Sorted(slices.Values(platforms))) {
		return fmt.Errorf("%s/package.json: want name %s, version %s, license %s and optionalDependencies %v; it has %s, %s, %s and %v",
			src, npmMain, version, npmLicense, platforms, pkg.Name, pkg.Version, pkg.License, deps)
	}
	for name, v := range pkg.Optional {
		if v != version {
			return fmt.Errorf("%s/package.json: optionalDependencies %s is %q, want %q", src, name, v, version)
		}
	}
	return writeFile(filepath.Join(dir, "LICENSE"), license, 0o644)
}

// stagePlatform writes one platform package: its package.json, both binaries (named .exe on
// Windows, which the launcher runs them by), LICENSE and README.
func stagePlatform(dir string, t Target, pkg platformPackage, bins Binaries, license []byte, readme string) error {
	b, err := json.MarshalIndent(pkg, "", "  ")
	if err != nil {
		return err
	}
	exe, hook, err := bins.Read(t)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
		perm os.FileMode
	}{{"package.json", append(b, '\n'), 0o644}, {"bin/" + ProgramName("agent-rewind", t), exe, 0o755}, {"bin/" + ProgramName("agent-rewind-hook", t), hook, 0o755},
		{"LICENSE", license, 0o644}, {"README.md", []byte(readme), 0o644}} {
		if err := writeFile(filepath.Join(dir, f.name), f.data, f.perm); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(path string, data []byte, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, data, perm); err != nil {
		return err
	}
	return os.Chmod(path, perm) // WriteFile keeps the mode of a file that existed, and umask applies
}

// npmPack packs the package in dir into out and returns the tarball's path.
func npmPack(ctx context.Context, dir, out string) (string, error) {
	abs, err := filepath.Abs(out)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "npm", "pack", "--json", "--pack-destination", abs)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm pack in %s: %v\n%s", dir, err, stderr.String())
	}
	var res []struct{ Filename string }
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || len(res) != 1 {
		return "", fmt.Errorf("npm pack in %s: unexpected output %q (%v)", dir, stdout.String(), err)
	}
	return filepath.Join(abs, res[0].Filename), nil
}

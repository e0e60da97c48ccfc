package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
)

// Machine is what the figures were measured on.
type Machine struct {
	Go          string `json:"go"`
	OS          string `json:"os"`
	Arch        string `json:"arch"`
	CPUModel    string `json:"cpu_model"`
	CPUs        int    `json:"cpus"`
	GOMAXPROCS  int    `json:"gomaxprocs"`
	MemoryBytes int64  `json:"memory_bytes"`
	LoadAverage string `json:"load_average,omitempty"` // /proc/loadavg at the start: was the machine busy?
}

// readMachine describes this machine; fields it cannot read are "unknown" or 0.
func readMachine() Machine {
	m := Machine{
		Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		CPUModel: "unknown", CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
	}
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		m.CPUModel = v
	}
	if v := procField("/proc/meminfo", "MemTotal"); v != "" {
		if kb, err := strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64); err == nil {
			m.MemoryBytes = kb * 1024
		}
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		m.LoadAverage = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	return m
}

// procField returns the value of the first "key: value" line of a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// GitState is the commit the figures were produced from. Dirty is absent when unknown.
type GitState struct {
	Commit string `json:"commit"` // "unknown" outside a git checkout
	Dirty  *bool  `json:"dirty"`  // uncommitted changes (tracked or untracked) at the start of the run
}

// readGit describes the checkout at root.
func readGit(ctx context.Context, root string) GitState {
	g := GitState{Commit: "unknown"}
	out, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		return g
	}
	g.Commit = strings.TrimSpace(string(out))
	out, err = exec.CommandContext(ctx, "git", "-C", root, "status", "--porcelain").Output()
	if err == nil {
		dirty := len(strings.TrimSpace(string(out))) > 0
		g.Dirty = &dirty
	}
	return g
}

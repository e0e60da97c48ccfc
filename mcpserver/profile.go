package mcpserver

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Profile selects which tools the server exposes. A smaller profile costs the agent less
// context on every turn; a hidden tool is not listed and cannot be called.
type Profile string

// The profiles. ProfileAll is the default.
const (
	// ProfileLean is checkpoint, rewind and guard_effect: the smallest useful surface.
	ProfileLean Profile = "lean"
	// ProfileRecovery is lean plus list, replay, backtrack_candidates and backtrack_commit.
	ProfileRecovery Profile = "recovery"
	// ProfileAnalytics is savings alone.
	ProfileAnalytics Profile = "analytics"
	// ProfileAll is all eight tools.
	ProfileAll Profile = "all"
)

// DefaultProfile is the profile used when neither the flag nor the environment names one.
const DefaultProfile = ProfileAll

// EnvProfile is the environment variable that selects a profile when no flag does.
const EnvProfile = "REWIND_MCP_PROFILE"

// The tool names.
const (
	toolCheckpoint          = "checkpoint"
	toolList                = "list"
	toolRewind              = "rewind"
	toolReplay              = "replay"
	toolGuardEffect         = "guard_effect"
	toolSavings             = "savings"
	toolBacktrackCandidates = "backtrack_candidates"
	toolBacktrackCommit     = "backtrack_commit"
)

var (
	leanTools      = []string{toolCheckpoint, toolRewind, toolGuardEffect}
	recoveryTools  = append(slices.Clip(leanTools), toolList, toolReplay, toolBacktrackCandidates, toolBacktrackCommit)
	analyticsTools = []string{toolSavings}
	allTools       = append(slices.Clip(recoveryTools), toolSavings)
)

// Profiles returns every profile, smallest first.
func Profiles() []Profile {
	return []Profile{ProfileLean, ProfileRecovery, ProfileAnalytics, ProfileAll}
}

// Tools returns the names of the tools p exposes, in a fixed order, or nil for an unknown
// profile.
func (p Profile) Tools() []string {
	switch p {
	case ProfileLean:
		return slices.Clone(leanTools)
	case ProfileRecovery:
		return slices.Clone(recoveryTools)
	case ProfileAnalytics:
		return slices.Clone(analyticsTools)
	case ProfileAll:
		return slices.Clone(allTools)
	}
	return nil
}

// Has reports whether p exposes the tool named name.
func (p Profile) Has(name string) bool { return slices.Contains(p.Tools(), name) }

// ErrUnknownProfile is wrapped by the error ParseProfile and ResolveProfile return for a name
// that is not a profile.
var ErrUnknownProfile = errors.New("unknown MCP profile")

// ParseProfile returns the profile named s (exactly, lower case).
func ParseProfile(s string) (Profile, error) {
	p := Profile(s)
	if p.Tools() == nil {
		return "", fmt.Errorf("%w %q: use one of %s", ErrUnknownProfile, s, profileNames())
	}
	return p, nil
}

// ResolveProfile picks the profile from the --profile flag value and the environment, in that
// order of precedence: a non-empty flag wins, then a non-empty REWIND_MCP_PROFILE (read through
// getenv, typically os.Getenv), then DefaultProfile. An unknown name is an error that says where
// it came from; the caller prints it and exits 1 before serving.
func ResolveProfile(flag string, getenv func(string) string) (Profile, error) {
	if flag != "" {
		p, err := ParseProfile(flag)
		if err != nil {
			return "", fmt.Errorf("--profile: %w", err)
		}
		return p, nil
	}
	if getenv != nil {
		if v := getenv(EnvProfile); v != "" {
			p, err := ParseProfile(v)
			if err != nil {
				return "", fmt.Errorf("%s: %w", EnvProfile, err)
			}
			return p, nil
		}
	}
	return DefaultProfile, nil
}

func profileNames() string {
	var names []string
	for _, p := range Profiles() {
		names = append(names, string(p))
	}
	return strings.Join(names, ", ")
}

// profilesWith returns the profiles that expose the tool named name.
func profilesWith(name string) []string {
	var ps []string
	for _, p := range Profiles() {
		if p.Has(name) {
			ps = append(ps, string(p))
		}
	}
	return ps
}

package trust

import (
	"os"
	"strconv"
	"strings"
)

// Where the group rule reads users and groups; tests point them elsewhere.
var passwdFile, groupFile = "/etc/passwd", "/etc/group"

// ownerOnlyGroup reports whether group gid is the owner's alone, as Debian's ssh decides before
// it accepts a group-writable file (a user private group, which umask 002 systems give every
// user): the group has no member listed and the owner's name, or the owner as its only member.
// Only /etc/passwd and /etc/group are read (no NSS: a directory service's group is refused),
// and only when a folder is group-writable.
func ownerOnlyGroup(gid, uid uint32) bool {
	user, ok := lookup(passwdFile, 2, uid)
	if !ok {
		return false
	}
	group, ok := lookup(groupFile, 2, gid)
	if !ok {
		return false
	}
	members := group[3]
	if members == "" {
		return group[0] == user[0]
	}
	return members == user[0]
}

// lookup returns the fields of the first line of the colon-separated file name whose field
// idField is id (/etc/passwd and /etc/group both hold the id in their third field).
func lookup(name string, idField int, id uint32) ([]string, bool) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, false
	}
	want := strconv.FormatUint(uint64(id), 10)
	for line := range strings.SplitSeq(string(b), "\n") {
		if f, ok := entry(line); ok && f[idField] == want {
			return f, true
		}
	}
	return nil, false
}

// entry splits one line of /etc/passwd or /etc/group into its fields: at least four, the first
// (the name) not empty, not a comment or a NIS "+"/"-" line.
func entry(line string) ([]string, bool) {
	line = strings.TrimSuffix(line, "\r")
	if line == "" || line[0] == '#' || line[0] == '+' || line[0] == '-' {
		return nil, false
	}
	f := strings.Split(line, ":")
	if len(f) < 4 || f[0] == "" {
		return nil, false
	}
	f[3] = strings.TrimSpace(f[3])
	return f, true
}

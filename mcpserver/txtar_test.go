package mcpserver_test

import (
	"bytes"
	"fmt"
	"strings"
)

// The golden protocol exchanges are txtar archives, the format the go-sdk's own conformance
// tests use (golang.org/x/tools/txtar): a free-text comment, then files, each introduced by a
// line "-- name --". This is the whole format; a dozen lines here spare a dependency.

type archive struct {
	comment string
	files   []archiveFile
}

type archiveFile struct {
	name string
	data string
}

func parseArchive(data []byte) (*archive, error) {
	a := &archive{}
	cur := -1
	var b strings.Builder
	flush := func() {
		if cur < 0 {
			a.comment = b.String()
		} else {
			a.files[cur].data = b.String()
		}
		b.Reset()
	}
	for line := range strings.Lines(string(data)) {
		trimmed := strings.TrimRight(line, "\r\n")
		if name, ok := strings.CutPrefix(trimmed, "-- "); ok && strings.HasSuffix(name, " --") {
			flush()
			name = strings.TrimSpace(strings.TrimSuffix(name, " --"))
			for _, f := range a.files {
				if f.name == name {
					return nil, fmt.Errorf("duplicate file %q", name)
				}
			}
			a.files = append(a.files, archiveFile{name: name})
			cur = len(a.files) - 1
			continue
		}
		b.WriteString(line)
	}
	flush()
	return a, nil
}

func (a *archive) file(name string) (string, bool) {
	for _, f := range a.files {
		if f.name == name {
			return f.data, true
		}
	}
	return "", false
}

// set replaces the named file's data, or appends the file.
func (a *archive) set(name, data string) {
	for i := range a.files {
		if a.files[i].name == name {
			a.files[i].data = data
			return
		}
	}
	a.files = append(a.files, archiveFile{name, data})
}

func (a *archive) format() []byte {
	var b bytes.Buffer
	b.WriteString(a.comment)
	for _, f := range a.files {
		fmt.Fprintf(&b, "-- %s --\n", f.name)
		b.WriteString(f.data)
		if f.data != "" && !strings.HasSuffix(f.data, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

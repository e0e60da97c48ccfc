package watch

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Mounts. inotify watches a folder's inode in its file system: a file system mounted on a folder
// of the workspace, or a folder mounted at a second path (a bind mount), is not seen through the
// watches of the folders above it, while a checkpoint's walk crosses it. So the watcher watches
// nothing at or below a mount point below the root (a folder whose mount id, from statx, differs
// from the root's: bind mounts included), and names each in every answer: the checkpoint reads
// them whole, whatever their file system (a network or FUSE one too). Mounts made or removed
// while it runs raise no event: the kernel flags /proc/self/mountinfo instead (poll), and when
// the mounts at or below the root are no longer those it started with, it refuses.

// folderID is what tells one folder from another: device, inode, and the mount it is seen on.
type folderID struct{ dev, ino, mnt uint64 }

// errNoMountID says the kernel does not give a path's mount id (statx STATX_MNT_ID, Linux 5.8).
var errNoMountID = errors.New("this kernel does not tell which mount a folder is on (statx STATX_MNT_ID, Linux 5.8 or later), so the watcher cannot see mounts in the workspace: checkpoints walk the tree")

// statID is the folderID of path, relative to dirfd, with statx's flags (AT_EMPTY_PATH: dirfd
// itself; AT_SYMLINK_NOFOLLOW).
func statID(dirfd int, path string, flags int) (folderID, error) {
	var st unix.Statx_t
	if err := unix.Statx(dirfd, path, flags|unix.AT_STATX_SYNC_AS_STAT, unix.STATX_INO|unix.STATX_MNT_ID, &st); err != nil {
		if errors.Is(err, syscall.ENOSYS) {
			return folderID{}, errNoMountID
		}
		return folderID{}, err
	}
	if st.Mask&unix.STATX_MNT_ID == 0 {
		return folderID{}, errNoMountID
	}
	return folderID{unix.Mkdev(st.Dev_major, st.Dev_minor), st.Ino, st.Mnt_id}, nil
}

// mountInfo is where the mount table is, as this process sees it.
const mountInfo = "/proc/self/mountinfo"

// mountTable watches the mounts at or below the root for changes.
type mountTable struct {
	fd   int    // mountInfo, open: poll flags it (POLLPRI) once the table changed since the last poll
	root string // the root's path as the table names it (the kernel's name for its descriptor)
	ids  []int  // the mounts at or below the root when the watcher started, sorted
}

// openMountTable opens the mount table and notes the mounts at or below the folder that
// rootPath (/proc/self/fd/N) reaches.
func openMountTable(rootPath string) (*mountTable, error) {
	root, err := os.Readlink(rootPath)
	if err != nil {
		return nil, fmt.Errorf("the watcher reaches the workspace through /proc, which it cannot read: %w", err)
	}
	// Opened raw, not through os: Go's poller would poll it too, and each poll clears the flag.
	fd, err := syscall.Open(mountInfo, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("the watcher cannot see the mounts in the workspace: %w", err)
	}
	m := &mountTable{fd: fd, root: root}
	if m.ids, err = m.read(); err != nil {
		m.close()
		return nil, err
	}
	return m, nil
}

// read returns the mounts at or below the root, sorted.
func (m *mountTable) read() ([]int, error) {
	b, err := os.ReadFile(mountInfo)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", mountInfo, err)
	}
	mounts, err := parseMountInfo(b)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", mountInfo, err)
	}
	var ids []int
	for _, mt := range mounts {
		if under(mt.Point, m.root) {
			ids = append(ids, mt.ID)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// under reports whether path p is dir or lies below it.
func under(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// changed says how the mounts at or below the root differ from those at the start ("" when
// they do not, or the table has not changed since the last call).
func (m *mountTable) changed() (string, error) {
	fds := []unix.PollFd{{Fd: int32(m.fd), Events: unix.POLLPRI}}
	for {
		_, err := unix.Poll(fds, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("poll %s: %w", mountInfo, err)
		}
		break
	}
	if fds[0].Revents&(unix.POLLPRI|unix.POLLERR) == 0 {
		return "", nil
	}
	ids, err := m.read()
	if err != nil {
		return "", err
	}
	if !slices.Equal(ids, m.ids) {
		return fmt.Sprintf("the mounts at or below %s changed while the watcher ran (%d then, %d now): checkpoints walk the tree until a new watcher starts", m.root, len(m.ids), len(ids)), nil
	}
	return "", nil
}

func (m *mountTable) close() { syscall.Close(m.fd) }

// mountEntry is one line of a mountinfo file (proc_pid_mountinfo(5)): the fields the watcher
// uses.
type mountEntry struct {
	ID    int    // the mount id (statx's stx_mnt_id)
	Point string // where it is mounted, relative to the process's root
}

// parseMountInfo parses a mountinfo file: lines of space-separated fields, the first the mount
// id, the fifth the mount point, with space, tab, newline and backslash escaped as \ooo.
func parseMountInfo(b []byte) ([]mountEntry, error) {
	var out []mountEntry
	for n, line := range strings.Split(string(b), "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 5 {
			return nil, fmt.Errorf("line %d has %d fields, want at least 5: %.80q", n+1, len(f), line)
		}
		id, err := strconv.Atoi(f[0])
		if err != nil || id < 0 {
			return nil, fmt.Errorf("line %d: mount id %.20q is not a number", n+1, f[0])
		}
		p, err := unescapeOctal(f[4])
		if err != nil || !strings.HasPrefix(p, "/") {
			return nil, fmt.Errorf("line %d: mount point %.80q is not an absolute path", n+1, f[4])
		}
		out = append(out, mountEntry{ID: id, Point: p})
	}
	return out, nil
}

// unescapeOctal undoes the kernel's \ooo escapes of a mountinfo field.
func unescapeOctal(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+3 >= len(s) {
			return "", fmt.Errorf("a cut escape at %d", i)
		}
		v, err := strconv.ParseUint(s[i+1:i+4], 8, 8)
		if err != nil {
			return "", fmt.Errorf("escape %q at %d", s[i:i+4], i)
		}
		b.WriteByte(byte(v))
		i += 3
	}
	return b.String(), nil
}

// ownMountNS is this process's mount namespace: a watcher in another one sees other mounts.
var ownMountNS = sync.OnceValue(func() string {
	ns, _ := os.Readlink("/proc/self/ns/mnt")
	return ns
})

package workspace

import (
	"fmt"
	"strconv"
)

// Identity tells one workspace folder from every other: its file system's device, its inode,
// and its birth time where the file system records one (inode numbers are reused once a folder
// is deleted; a birth time in nanoseconds is not). It survives deleting every file inside the
// folder and moving the folder within its file system; a folder deleted and made again at the
// same path has a new identity.
type Identity struct {
	Device uint64 `json:"device"`
	Inode  uint64 `json:"inode"`
	Birth  int64  `json:"birth,omitempty"` // ns since the epoch; 0 where the file system keeps none
}

// key names the identity in the registry's identities/ folder. With a birth time the device is
// left out: some file systems (btrfs, network and overlay mounts) number devices anew at each
// mount, and inode plus birth time is already unique.
func (id Identity) key() string {
	if id.Birth != 0 {
		return strconv.FormatUint(id.Inode, 16) + "-" + strconv.FormatInt(id.Birth, 16)
	}
	return "d" + strconv.FormatUint(id.Device, 16) + "-" + strconv.FormatUint(id.Inode, 16)
}

// same reports whether id and o are the same folder.
func (id Identity) same(o Identity) bool { return id.key() == o.key() }

// String is the identity as "device D, inode I, born T" for messages.
func (id Identity) String() string {
	s := fmt.Sprintf("device %d, inode %d", id.Device, id.Inode)
	if id.Birth != 0 {
		s += fmt.Sprintf(", born %d", id.Birth)
	}
	return s
}

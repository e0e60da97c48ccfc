package trust

import (
	"os"
	"syscall"
	"unsafe"

	"github.com/agent-rewind/rewind/internal/winpath"
)

var (
	advapi32            = syscall.NewLazyDLL("advapi32.dll")
	procGetSecurityInfo = advapi32.NewProc("GetSecurityInfo")
)

// GetSecurityInfo's object type and the part of the descriptor read (accctrl.h, winnt.h).
const (
	seFileObject             = 1
	ownerSecurityInformation = 0x1
	daclSecurityInformation  = 0x4
	readControl              = 0x00020000
	tokenOwnerInformation    = 4 // TOKEN_INFORMATION_CLASS TokenOwner
	sidSystem                = "S-1-5-18"
	sidAdministrators        = "S-1-5-32-544"
	sidTrustedInstaller      = "S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464"
)

// security is what a folder's, file's or link's security descriptor says: its owner and the
// entries of its access list (a missing list lets everyone do anything).
type security struct {
	owner string
	aces  []ace
}

// securityOf reads the security descriptor of path, a folder, file or reparse point (opened as
// itself, not followed), with GetSecurityInfo on the open handle: what was opened is what is
// judged.
func securityOf(path string) (security, error) {
	p, err := syscall.UTF16PtrFromString(winpath.Long(path))
	if err != nil {
		return security{}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	share := uint32(syscall.FILE_SHARE_READ | syscall.FILE_SHARE_WRITE | syscall.FILE_SHARE_DELETE)
	flags := uint32(syscall.FILE_FLAG_BACKUP_SEMANTICS | syscall.FILE_FLAG_OPEN_REPARSE_POINT)
	h, err := syscall.CreateFile(p, readControl, share, nil, syscall.OPEN_EXISTING, flags, 0)
	if err != nil {
		return security{}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.CloseHandle(h)
	var owner *syscall.SID
	var dacl unsafe.Pointer
	var sd uintptr
	r, _, _ := procGetSecurityInfo.Call(uintptr(h), seFileObject, ownerSecurityInformation|daclSecurityInformation,
		uintptr(unsafe.Pointer(&owner)), 0, uintptr(unsafe.Pointer(&dacl)), 0, uintptr(unsafe.Pointer(&sd)))
	if r != 0 { // GetSecurityInfo returns the error itself
		return security{}, &os.PathError{Op: "read the security descriptor of", Path: path, Err: syscall.Errno(r)}
	}
	defer syscall.LocalFree(syscall.Handle(sd))
	if owner == nil {
		return security{}, &os.PathError{Op: "read the owner of", Path: path, Err: syscall.Errno(13)} // ERROR_INVALID_DATA
	}
	var sec security
	if sec.owner, err = owner.String(); err != nil {
		return security{}, &os.PathError{Op: "read the owner of", Path: path, Err: err}
	}
	if sec.aces, err = parseACL(dacl); err != nil {
		return security{}, &os.PathError{Op: "read the access list of", Path: path, Err: err}
	}
	return sec, nil
}

// you is the current user (the process token's user) and the owner Windows gives what it
// creates (the token's owner: the user, or Administrators for an elevated administrator).
type you struct{ user, owner string }

func self() (you, error) {
	t, err := syscall.OpenCurrentProcessToken()
	if err != nil {
		return you{}, err
	}
	defer t.Close()
	u, err := t.GetTokenUser()
	if err != nil {
		return you{}, err
	}
	user, err := u.User.Sid.String()
	if err != nil {
		return you{}, err
	}
	y := you{user: user, owner: user}
	// TOKEN_OWNER is one pointer to a SID, followed by the SID in the same buffer.
	buf := make([]byte, 128)
	var n uint32
	if err := syscall.GetTokenInformation(t, tokenOwnerInformation, &buf[0], uint32(len(buf)), &n); err == nil {
		if s, err := (*(**syscall.SID)(unsafe.Pointer(&buf[0]))).String(); err == nil {
			y.owner = s
		}
	}
	return y, nil
}

// mine reports whether sid may own the folder trusted itself: the user, or whom the user's
// new folders are owned by.
func (y you) mine(sid string) bool { return sid == y.user || sid == y.owner }

// system reports whether sid may own a folder above the one trusted: the user, or one of
// Windows' own accounts, which own C:\, C:\Users and the folders Windows installs.
func (y you) system(sid string) bool {
	return y.mine(sid) || sid == sidSystem || sid == sidAdministrators || sid == sidTrustedInstaller
}

// name is sid with its account name when Windows knows it, for a person to read.
func name(sid string) string {
	s, err := syscall.StringToSid(sid)
	if err != nil {
		return sid
	}
	account, domain, _, err := s.LookupAccount("")
	if err != nil || account == "" {
		return sid
	}
	if domain != "" {
		account = domain + `\` + account
	}
	return account + " (" + sid + ")"
}

package trust

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// TestFolderOwnWindows: this user's folders pass, made or to be made, through relative parts;
// a file is no folder; Within judges what is below.
func TestFolderOwnWindows(t *testing.T) {
	base := t.TempDir()
	state := filepath.Join(base, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{state, filepath.Join(state, "not", "made", "yet"), state + `\.\x\..`, strings.ReplaceAll(state, `\`, "/")} {
		if err := Folder(d); err != nil {
			t.Fatalf("Folder(%s): %v", d, err)
		}
	}
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	mustRefuse(t, Folder(file), file, "not a folder (a file)")
	mustRefuse(t, Folder(filepath.Join(file, "x")), file, "not a folder")
	mustRefuse(t, Within(base, filepath.Join(file, "x")), file, "not a folder")
	if err := Within(base, filepath.Join(state, "a", "b")); err != nil {
		t.Fatalf("Within: %v", err)
	}
	if err := Within(state, base); err == nil {
		t.Fatal("Within accepted a folder outside its base")
	}
}

// TestFolderOfAnotherOwner: a folder whose owner is another account is refused with who owns
// it, as the folder itself and as a folder above: judged for another user, then (where the
// system lets this process give it away) owned by Users, a group no person's folder is owned by.
func TestFolderOfAnotherOwner(t *testing.T) {
	base := t.TempDir()
	theirs := filepath.Join(base, "theirs")
	if err := os.Mkdir(theirs, 0o700); err != nil {
		t.Fatal(err)
	}
	// Judged as another user would judge it, this user's folder is another's.
	y, err := self()
	if err != nil {
		t.Fatal(err)
	}
	other := you{user: "S-1-5-21-1-2-3-1001", owner: "S-1-5-21-1-2-3-1001"}
	mustRefuse(t, own(theirs, other), theirs, "owned by", y.user, "not by you", "S-1-5-21-1-2-3-1001", "/setowner")
	mustRefuse(t, above(theirs, other), theirs, "owned by", "choose a folder outside "+theirs)

	const users = "S-1-5-32-545"
	if err := setOwner(theirs, users); err != nil {
		t.Skipf("cannot give a folder to another owner here (Windows lets only SeRestorePrivilege do that): %v", err)
	}
	if sec, err := securityOf(theirs); err != nil || sec.owner != users {
		t.Skipf("the owner was set but reads back as %q, %v (Wine 8 keeps no owners: every file is the user's)", sec.owner, err)
	}
	mustRefuse(t, Folder(theirs), theirs, "owned by", users, "not by you", "/setowner")
	mustRefuse(t, Folder(filepath.Join(theirs, "state")), theirs, "owned by", "choose a folder outside")
	mustRefuse(t, Within(base, filepath.Join(theirs, "x")), theirs, "owned by")
}

// TestProcessUser: a process started by this one runs as this user, as Peer requires of a
// server and ClientPeer of a client (their pipes: cli/internal/unixsock's and hookwire's tests).
func TestProcessUser(t *testing.T) {
	y, err := self()
	if err != nil {
		t.Fatal(err)
	}
	if sid, err := processUser(uint32(os.Getpid())); err != nil || sid != y.user {
		t.Fatalf("processUser(self) = %q, %v; want %q", sid, err, y.user)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	if sid, err := processUser(uint32(cmd.Process.Pid)); err != nil || sid != y.user {
		t.Fatalf("processUser(child) = %q, %v; want %q", sid, err, y.user)
	}
	if _, err := processUser(0xFFFFFFF0); err == nil {
		t.Fatal("processUser of no process succeeded")
	}
	if err := Peer(-1, `C:\nowhere\sock`); err == nil || !strings.Contains(err.Error(), "server's process id") {
		t.Fatalf("Peer of no pipe = %v", err)
	}
	if err := ClientPeer(-1, `C:\nowhere\sock`); err == nil || !strings.Contains(err.Error(), "client's process id") {
		t.Fatalf("ClientPeer of no pipe = %v", err)
	}
}

// setOwner gives path to sid (SetNamedSecurityInfo, OWNER_SECURITY_INFORMATION).
func setOwner(path, sid string) error {
	s, err := syscall.StringToSid(sid)
	if err != nil {
		return err
	}
	p, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return err
	}
	r, _, _ := advapi32.NewProc("SetNamedSecurityInfoW").Call(uintptr(unsafe.Pointer(p)), seFileObject, ownerSecurityInformation, uintptr(unsafe.Pointer(s)), 0, 0, 0)
	if r != 0 {
		return syscall.Errno(r)
	}
	return nil
}

// acesOf parses the access list of the security descriptor sddl (SDDL, as icacls and
// PowerShell's Get-Acl show one) through Windows' own parser.
func acesOf(t *testing.T, sddl string) []ace {
	t.Helper()
	p, err := syscall.UTF16PtrFromString(sddl)
	if err != nil {
		t.Fatal(err)
	}
	var sd uintptr
	if r, _, err := advapi32.NewProc("ConvertStringSecurityDescriptorToSecurityDescriptorW").Call(uintptr(unsafe.Pointer(p)), 1, uintptr(unsafe.Pointer(&sd)), 0); r == 0 {
		t.Fatalf("SDDL %q: %v", sddl, err)
	}
	defer syscall.LocalFree(syscall.Handle(sd))
	var present, defaulted int32
	var dacl unsafe.Pointer
	if r, _, err := advapi32.NewProc("GetSecurityDescriptorDacl").Call(sd, uintptr(unsafe.Pointer(&present)), uintptr(unsafe.Pointer(&dacl)), uintptr(unsafe.Pointer(&defaulted))); r == 0 {
		t.Fatal(err)
	}
	aces, err := parseACL(dacl)
	if err != nil {
		t.Fatalf("parseACL(%q): %v", sddl, err)
	}
	return aces
}

// TestAccessLists: who else an access list lets change the folder trusted, or replace what is
// in a folder above: a profile's list lets no one; Authenticated Users' right to make folders
// in C:\ is allowed above, not in the folder trusted, and their right to change what C:\'s new
// folders hold counts only there; reading, a deny, Everyone, a null list.
func TestAccessLists(t *testing.T) {
	y := you{user: "S-1-5-21-1-2-3-1000", owner: "S-1-5-21-1-2-3-1000"}
	profile := "D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;FA;;;S-1-5-21-1-2-3-1000)"
	for _, c := range []struct {
		sddl      string
		own, over string // the SID refused in the folder trusted, in a folder above ("": none)
	}{
		{profile, "", ""},
		{profile + "(A;OICIIO;GA;;;CO)", "", ""},                                                    // CREATOR OWNER: the user, on what they make
		{profile + "(A;;0x1200a9;;;BU)(A;;0x1200a9;;;WD)", "", ""},                                  // Users and Everyone read and list
		{profile + "(A;;0x4;;;AU)", "S-1-5-11", ""},                                                 // C:\: Authenticated Users make folders
		{profile + "(A;OICIIO;0x1301bf;;;AU)", "S-1-5-11", ""},                                      // C:\: and change what its new folders hold
		{profile + "(A;;0x1301bf;;;AU)", "S-1-5-11", "S-1-5-11"},                                    // a folder made in C:\: Modify, DELETE included
		{profile + "(D;;FA;;;WD)", "", ""},                                                          // a deny takes nothing away from the user
		{profile + "(A;;FA;;;S-1-5-21-1-2-3-1001)", "S-1-5-21-1-2-3-1001", "S-1-5-21-1-2-3-1001"},   // another user
		{profile + "(A;;0x40;;;S-1-5-21-1-2-3-1001)", "S-1-5-21-1-2-3-1001", "S-1-5-21-1-2-3-1001"}, // delete what is inside
	} {
		aces := acesOf(t, c.sddl)
		if a, ok := y.otherWriter(aces, changeRights, true); a.sid != c.own || ok != (c.own != "") {
			t.Errorf("%s: the folder trusted is refused for %q (%v), want %q", c.sddl, a.sid, ok, c.own)
		}
		if a, ok := y.otherWriter(aces, replaceRights, false); a.sid != c.over || ok != (c.over != "") {
			t.Errorf("%s: a folder above is refused for %q (%v), want %q", c.sddl, a.sid, ok, c.over)
		}
	}
	// No list at all (a NULL DACL, which GetSecurityInfo gives as nil): everyone may.
	if nul, err := parseACL(nil); err != nil || len(nul) != 1 || nul[0].sid != sidEveryone {
		t.Fatalf("parseACL(nil) = %+v, %v", nul, err)
	} else if _, ok := y.otherWriter(nul, replaceRights, false); !ok {
		t.Fatal("a missing access list is trusted")
	}
	// A truncated list is an error, not a guess.
	truncated := [8]byte{2, 0, 8, 0, 1, 0} // revision 2, 8 bytes, 1 entry: the header alone
	if _, err := parseACL(unsafe.Pointer(&truncated)); err == nil {
		t.Fatal("parseACL of a list whose one entry is missing succeeded")
	}
}

// TestFolderOpenToOthers: a folder whose access list lets everyone change it is refused with
// who and what to run, where the system keeps the list that was set.
func TestFolderOpenToOthers(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := setDACL(state, "D:(A;OICI;FA;;;WD)"); err != nil {
		t.Skipf("cannot set the folder's access list here: %v", err)
	}
	// Wine keeps a list as the Unix mode it maps to, and gives Everyone 0x1301ff back.
	if sec, err := securityOf(state); err != nil || !slices.ContainsFunc(sec.aces, func(a ace) bool { return a.sid == sidEveryone && a.mask&changeRights != 0 }) {
		t.Skipf("the access list was set but reads back as %+v, %v", sec.aces, err)
	}
	mustRefuse(t, Folder(state), state, "lets Everyone", "change what is in it", "/inheritance:r")
	mustRefuse(t, Folder(filepath.Join(state, "in")), state, "rename or replace what is in it")
}

// setDACL sets the access list of path to the one in sddl.
func setDACL(path, sddl string) error {
	p, err := syscall.UTF16PtrFromString(sddl)
	if err != nil {
		return err
	}
	var sd uintptr
	if r, _, err := advapi32.NewProc("ConvertStringSecurityDescriptorToSecurityDescriptorW").Call(uintptr(unsafe.Pointer(p)), 1, uintptr(unsafe.Pointer(&sd)), 0); r == 0 {
		return err
	}
	defer syscall.LocalFree(syscall.Handle(sd))
	var present, defaulted int32
	var dacl uintptr
	if r, _, err := advapi32.NewProc("GetSecurityDescriptorDacl").Call(sd, uintptr(unsafe.Pointer(&present)), uintptr(unsafe.Pointer(&dacl)), uintptr(unsafe.Pointer(&defaulted))); r == 0 {
		return err
	}
	name, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return err
	}
	if r, _, _ := advapi32.NewProc("SetNamedSecurityInfoW").Call(uintptr(unsafe.Pointer(name)), seFileObject, daclSecurityInformation, 0, 0, dacl, 0); r != 0 {
		return syscall.Errno(r)
	}
	return nil
}

package trust

import (
	"os"
	"os/exec"
	"path/filepath"
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
	if sid, err := ownerOf(theirs); err != nil || sid != users {
		t.Skipf("the owner was set but reads back as %q, %v (Wine 8 keeps no owners: every file is the user's)", sid, err)
	}
	mustRefuse(t, Folder(theirs), theirs, "owned by", users, "not by you", "/setowner")
	mustRefuse(t, Folder(filepath.Join(theirs, "state")), theirs, "owned by", "choose a folder outside")
	mustRefuse(t, Within(base, filepath.Join(theirs, "x")), theirs, "owned by")
}

// TestProcessUser: a process started by this one runs as this user, as Peer requires of a
// server (the socket itself cannot be tested under Wine 8, which has no AF_UNIX sockets).
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
	if err := Peer(-1, `C:\nowhere\sock`); err == nil || !strings.Contains(err.Error(), "process id") {
		t.Fatalf("Peer of no socket = %v", err)
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

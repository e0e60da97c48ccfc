package trust

import (
	"errors"
	"syscall"
	"unsafe"
)

// ace is one entry of an access list that allows: whom (a SID), what (the access mask), and
// whether it applies only to what is created inside (inherit-only).
type ace struct {
	sid         string
	mask        uint32
	inheritOnly bool
}

// What an access list holds (winnt.h): ACE types that allow, the inherit-only flag, Everyone.
const (
	accessAllowedAceType         = 0
	accessAllowedCallbackAceType = 9
	inheritOnlyAce               = 0x08
	sidEveryone                  = "S-1-1-0"
)

// Rights that change a folder or what is in it, or who may (winnt.h).
const (
	fileWriteData       = 0x2 // FILE_ADD_FILE on a folder
	fileAppendData      = 0x4 // FILE_ADD_SUBDIRECTORY on a folder
	fileWriteEA         = 0x10
	fileDeleteChild     = 0x40
	fileWriteAttributes = 0x100
	deleteRight         = 0x10000
	writeDAC            = 0x40000
	writeOwner          = 0x80000
	genericAll          = 0x10000000
	genericWrite        = 0x40000000

	// changeRights: whoever holds one can change the folder trusted, or a link: add, replace
	// or remove what is in it, rename it, or give themselves more.
	changeRights = fileWriteData | fileAppendData | fileWriteEA | fileDeleteChild | fileWriteAttributes |
		deleteRight | writeDAC | writeOwner | genericAll | genericWrite
	// replaceRights: whoever holds one on a folder above can rename or remove what is in it,
	// or the folder itself, and put their own in its place; adding entries is allowed, as in
	// a sticky /tmp (Authenticated Users may make folders in C:\).
	replaceRights = fileDeleteChild | deleteRight | writeDAC | writeOwner | genericAll
)

// parseACL reads the allowing entries of the access list at acl (an ACL structure: an 8-byte
// header, then the entries, each of its own size). A nil list lets everyone do anything.
func parseACL(acl unsafe.Pointer) ([]ace, error) {
	if acl == nil {
		return []ace{{sid: sidEveryone, mask: genericAll}}, nil
	}
	size := *(*uint16)(unsafe.Add(acl, 2))
	count := *(*uint16)(unsafe.Add(acl, 4))
	b := unsafe.Slice((*byte)(acl), size)
	var out []ace
	off := 8
	for range count {
		if off+4 > len(b) {
			return nil, errors.New("an access list entry runs past the list")
		}
		typ, flags, n := b[off], b[off+1], int(b[off+2])|int(b[off+3])<<8
		if n < 4 || off+n > len(b) {
			return nil, errors.New("an access list entry runs past the list")
		}
		if typ == accessAllowedAceType || typ == accessAllowedCallbackAceType {
			// ACCESS_ALLOWED_ACE: the header, a mask, then the SID: 8 bytes and 4 a
			// sub-authority.
			if n < 16 || 16+4*int(b[off+9]) > n {
				return nil, errors.New("an access list entry holds a malformed SID")
			}
			sid, err := (*syscall.SID)(unsafe.Pointer(&b[off+8])).String()
			if err != nil {
				return nil, err
			}
			mask := uint32(b[off+4]) | uint32(b[off+5])<<8 | uint32(b[off+6])<<16 | uint32(b[off+7])<<24
			out = append(out, ace{sid: sid, mask: mask, inheritOnly: flags&inheritOnlyAce != 0})
		}
		off += n
	}
	return out, nil
}

// Well-known SIDs an access list names for the owner itself.
const (
	sidCreatorOwner = "S-1-3-0" // on folders, what the creator of a new entry gets on it
	sidOwnerRights  = "S-1-3-4"
)

// otherWriter returns the first entry of aces that lets someone other than this user, the
// owner stand-ins and Windows' own accounts hold one of rights; inherited says whether
// inherit-only entries count (for the folder trusted, whose new files and folders get them).
func (y you) otherWriter(aces []ace, rights uint32, inherited bool) (ace, bool) {
	for _, a := range aces {
		if a.mask&rights == 0 || a.inheritOnly && !inherited {
			continue
		}
		if y.system(a.sid) || a.sid == sidCreatorOwner || a.sid == sidOwnerRights {
			continue
		}
		return a, true
	}
	return ace{}, false
}

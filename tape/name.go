package tape

import "fmt"

// MaxNameLen is the longest tenant, epoch or cursor name.
const MaxNameLen = 64

// MaxRequestIDLen is the longest request id.
const MaxRequestIDLen = 128

// ValidateName checks a tenant, epoch or cursor name: 1 to 64 characters from [A-Za-z0-9_-],
// starting with a letter or a digit. Names become directory and lock file names and AEAD
// additional data, so the charset excludes '.', '/', '\\', spaces and anything a file system or a
// shell treats specially; what is a valid name is the same on every platform. kind ("tenant",
// "epoch", "cursor") only words the error.
func ValidateName(kind, name string) error {
	if name == "" {
		return fmt.Errorf("%w: %s name is empty: use 1 to %d characters from A-Z a-z 0-9 _ -", ErrInvalid, kind, MaxNameLen)
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("%w: %s name is %d bytes long, more than %d: use a shorter name", ErrInvalid, kind, len(name), MaxNameLen)
	}
	if !isAlnum(name[0]) {
		return fmt.Errorf("%w: %s name %q must start with a letter or a digit", ErrInvalid, kind, name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isAlnum(c) && c != '_' && c != '-' {
			return fmt.Errorf("%w: %s name %q has %q at byte %d: use only A-Z a-z 0-9 _ -", ErrInvalid, kind, name, c, i)
		}
	}
	return nil
}

// ValidateRequestID checks a request id: 1 to 128 characters from [A-Za-z0-9._:-]. That covers
// UUIDs, ULIDs and most client-generated ids, and excludes anything that could be mistaken for
// header syntax or whitespace.
func ValidateRequestID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: request id is empty: use 1 to %d characters from A-Z a-z 0-9 . _ : -", ErrInvalid, MaxRequestIDLen)
	}
	if len(id) > MaxRequestIDLen {
		return fmt.Errorf("%w: request id is %d bytes long, more than %d", ErrInvalid, len(id), MaxRequestIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !isAlnum(c) && c != '.' && c != '_' && c != ':' && c != '-' {
			return fmt.Errorf("%w: request id %q has %q at byte %d: use only A-Z a-z 0-9 . _ : -", ErrInvalid, id, c, i)
		}
	}
	return nil
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

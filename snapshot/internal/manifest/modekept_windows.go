package manifest

// ModeBitsKept are the permission bits a file on this system keeps: on Windows only the
// owner's write bit, as the read-only attribute. A file recorded 0755 on Linux reads back
// as 0644 here, and that is no change (SameMode).
const ModeBitsKept = 0o200

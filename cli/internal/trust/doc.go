// Package trust decides whether a folder or a local server may be trusted with agent-rewind's
// state, the way ssh decides about ~/.ssh (its StrictModes rule): a folder is trusted when no
// one but this user and root can change it or any folder above it, and a server when the
// process at the other end of its socket runs as this user.
//
// Folder walks a path from / down, one lstat a component, following symlinks as the kernel
// would (a symlink must itself be this user's or root's, since its owner can point it
// elsewhere). Every folder above must be owned by this user or root and writable by no one else,
// unless it is sticky (/tmp: no one else can rename or remove what is in it); the folder itself
// must be owned by this user and writable by no one else. A folder writable by its group passes
// where Debian's ssh lets it pass: when that group is the owner's own, with no other member.
// Components that do not exist yet pass: the caller creates them, mode 0700, and checks again.
//
// Peer reads the uid of the process at the other end of a connected unix socket
// (SO_PEERCRED on Linux, LOCAL_PEERCRED on macOS), so a client refuses a server that another
// user started, whatever the socket's file says.
//
// Windows (folder_windows.go, security_windows.go, acl_windows.go, peer_windows.go) has no
// modes and no uids: a folder is judged by its security descriptor (GetSecurityInfo on a handle
// of the folder or link itself). The folder trusted is owned by this user, those above and the
// links on the way by this user or Windows' own accounts; no one else's access-list entry may
// let them change the folder trusted (or what its new files inherit) or a link, nor rename or
// remove what is in a folder above (adding to it is allowed, as to a sticky /tmp). The local
// servers listen on named pipes there (cli/internal/unixsock): Peer reads the server's process
// id (GetNamedPipeServerProcessId), ClientPeer the client's (GetNamedPipeClientProcessId), and
// each that process's user from its token. PeerUID, the group rule and the sticky bit are
// Unix's alone.
//
// The hook client (cli/cmd/agent-rewind-hook) links this package, so it uses only the standard
// library's smallest parts: no fmt, no os/user.
package trust

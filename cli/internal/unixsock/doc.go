// Package unixsock is what agent-rewind's two local servers share: the change watcher
// (cli/internal/watch), one per workspace, and the guard server (cli/internal/hookserver), one
// per user. Each runs once per lock file (Lock) and listens on a socket path (Listen); its
// clients reach it there (Dial), telling "no server listens" (ErrNoServer) from any other
// failure. Both refuse a folder another user could change, Dial a server that runs as another
// user, and a server a client that does (Peer, PeerUID; cli/internal/trust). Supervise stops a
// server when its reason to run is gone: the servers stop when the file at the socket path is
// removed or replaced (os.SameFile), so that file is kept on every system.
//
// On Unix the path is a unix socket's, however long (through hookwire.SockName).
//
// On Windows it is a named pipe, whose name is derived from the path (hookwire.PipeName:
// \\.\pipe\agent-rewind-<hash of the absolute path>), with go-winio's overlapped net.Conn and
// net.Listener. The path holds a small regular file that Listen makes once the pipe is up and
// that names it: clients look for it first (none: ErrNoServer, as with a unix socket's file),
// and the servers' "removed or replaced" rule reads it unchanged. The pipe's access list admits
// this user alone and its first instance is created only if no pipe of that name exists
// (FILE_FLAG_FIRST_PIPE_INSTANCE), so another user can neither connect nor make the pipe first;
// the client checks the server's process user (GetNamedPipeServerProcessId), the server the
// client's (GetNamedPipeClientProcessId). A client connects only while the server accepts
// (busy instances are retried briefly), where a unix socket queues it. Wine 8, where the
// Windows tests run, has no AF_UNIX sockets (why pipes: Windows has them since 10 1803), and
// enforces neither the access list nor the first-instance rule: the peer checks are what hold
// there.
package unixsock

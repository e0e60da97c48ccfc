// Package unixsock is what agent-rewind's two local servers share: the change watcher
// (cli/internal/watch), one per workspace, and the guard server (cli/internal/hookserver), one
// per user. Each runs once per lock file (Lock) and listens on a unix socket whose path may be
// longer than an address holds (Listen, through hookwire.SockName); its clients reach it there
// (Dial), telling "no server listens" (ErrNoServer) from any other failure. Both refuse a
// folder another user could change, and Dial a server that runs as another user
// (cli/internal/trust). Supervise stops it when its reason to run is gone.
package unixsock

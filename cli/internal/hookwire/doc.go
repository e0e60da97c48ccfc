// Package hookwire is what the hook client (cli/cmd/agent-rewind-hook) and the guard server
// (cli/internal/hookserver) share: the socket's place, the framing of a request and its
// answers, and the build's version. The client links this package and the standard library's
// smallest parts only (its deps test pins them), so it stays small: no encoding/json, fmt, net,
// regexp or crypto.
//
// The wire format, both ways over one unix stream connection: a message is the 4 bytes "ARH1",
// a big-endian uint32 payload length, and the payload, a sequence of fields, each a big-endian
// uint32 length and that many bytes. A Request's fields are, in order: op, version, working
// directory, umask (4 bytes), "y" when standard input was read, standard input, the arguments
// and the environment (each string followed by a NUL: argv and environ strings hold none).
// An Answer's fields are: kind (one byte, see Kind), exit code (4 bytes), stdout, stderr.
//
// The server answers a guard request with one Answer of kind FallBack (it did nothing: the
// client runs the full guard itself; Code Restart when the server stops), with Result alone
// (a command line that is not the guard's: its usage), or with Accepted then Result. Accepted is sent before
// the server does anything that could record: it carries what to print should the connection
// break before the Result (the guard's own answer for an error while deciding, which fails
// closed), so that a client never falls back after the server may have acted.
package hookwire

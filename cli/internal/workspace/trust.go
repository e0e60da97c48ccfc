package workspace

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/trust"
)

// TrustedStateBase is StateBase once it is known that no other user can change it
// (trust.Folder: the folder and every one above it are this user's or root's, writable by no
// one else): a store there could otherwise be read, replaced or fed effect rules by them.
// Every entry point that opens the state base comes through here (At, the orphan listing, the
// hook's notices); the folder and its parents are walked at most every trustFor per process.
func TrustedStateBase() (string, error) {
	base, err := StateBase()
	if err != nil {
		return "", err
	}
	return base, checkBase(base, false)
}

// trustFor is how long a state base found trusted is not walked again by this process. Only
// this user or root can make a folder trusted whole become untrusted (by chmod or chown): no
// other user's action can, so a long-lived guard server need not walk it on every call.
const trustFor = 10 * time.Second

// trustedAt holds, by state base, when it was last found trusted whole.
var trustedAt sync.Map

// checkBase checks the state base base (trust.Folder), unless it was found trusted within
// trustFor and again is not set. A base that does not exist yet is judged by the folders above
// it, and remembered only once it does.
func checkBase(base string, again bool) error {
	if t, ok := trustedAt.Load(base); ok && !again && time.Since(t.(time.Time)) < trustFor {
		return nil
	}
	if err := trust.Folder(base); err != nil {
		trustedAt.Delete(base)
		return fmt.Errorf("agent-rewind's state folder is not safe to use: %w (or choose a state folder of your own with --state-dir or %s)", err, StateDirEnv)
	}
	if st, err := os.Stat(base); err == nil && st.IsDir() {
		trustedAt.Store(base, time.Now())
	}
	return nil
}

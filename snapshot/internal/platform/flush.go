package platform

import "errors"

// ErrNoVolumeFlush is SyncFS's refusal where a whole volume cannot be flushed by this process
// (Windows lets only an administrator): the caller fsyncs each file instead.
var ErrNoVolumeFlush = errors.New("the whole volume cannot be flushed here: fsync each file instead")

package main

// umask is 0, as agent-rewind-hook sends it from Windows, which has no file-creation mask.
func umask() uint32 { return 0 }

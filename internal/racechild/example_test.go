package racechild_test

import (
	"fmt"
	"os"

	"github.com/agent-rewind/rewind/internal/racechild"
)

func Example() {
	os.Unsetenv("GORACE")
	racechild.Quiet() // in TestMain, before m.Run starts tests that start children
	fmt.Println(os.Getenv("GORACE"))
	// Output: atexit_sleep_ms=0
}

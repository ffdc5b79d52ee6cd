package sweep_test

import (
	"os"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
)

// TestMain runs the tests, or, in a process fixtures.StartChild started,
// its backend.
func TestMain(m *testing.M) {
	fixtures.ServeIfChild()
	os.Exit(m.Run())
}

// liveServeProcess starts the built-in HTTP backend answering after delay
// in a process of its own (fixtures.StartChild), and returns its URL.
func liveServeProcess(t *testing.T, delay time.Duration) string {
	t.Helper()
	return fixtures.StartChild(t, fixtures.ProtoHTTP, fixtures.Options{Delay: delay}) + "/"
}

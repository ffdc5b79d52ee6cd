package main

import (
	"strings"
	"testing"
)

// The tests of measurement truth against built-in backends (closed and
// open model, the stall, the raw rows and spectrum, ab's arithmetic and
// counts) are in internal/execute (accuracy_test.go); the retry of speed
// assertions serves the command's other tests. The flag --raw is checked
// in faults_test.go (TestRawFlag), --percentiles in bench_test.go.

// speedAttempts is how many times a speed assertion is tried: a loaded
// machine can wreck the timing of one run, while a broken feature fails
// every attempt. Counts are checked on every attempt with t.Fatalf.
const speedAttempts = 3

// withSpeedRetries runs attempt until it reports no problem, at most
// speedAttempts times, and fails the test with the last problems.
func withSpeedRetries(t *testing.T, attempt func() []string) {
	t.Helper()
	for i := 1; ; i++ {
		bad := attempt()
		if len(bad) == 0 {
			return
		}
		if i == speedAttempts {
			t.Fatalf("after %d attempts: %s", i, strings.Join(bad, "; "))
		}
		t.Logf("attempt %d: %s; trying again", i, strings.Join(bad, "; "))
	}
}

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAccessLogCLI: a log with no usable line given to --access-log exits
// 2 with one line naming FILE:LINE. (The replay itself is tested in
// internal/targets.)
func TestAccessLogCLI(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.log")
	if err := os.WriteFile(bad, []byte("# not a log\n\n1.2.3.4 - - [t] \"POST /b HTTP/1.1\" 200 5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runMain(t, context.Background(), "bench", "-q", "--access-log", bad, "http://127.0.0.1:1/")
	if code != 2 || !strings.HasPrefix(errs, "backbench bench: "+bad+":1: no request to replay: does not match the log format") ||
		strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("bad log: exit %d, stderr %q", code, errs)
	}
}

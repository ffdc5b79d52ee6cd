package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
)

// TestAccessLogCLI replays an access log through bench: the text report
// has the targets table and the note of the lines left out, the JSON the
// replay's counts; a log with no usable line exits 2 with one line naming
// FILE:LINE.
func TestAccessLogCLI(t *testing.T) {
	onceAcrossEngines(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "access.log")
	lines := `1.2.3.4 - - [07/Dec/2026:12:00:00 +0000] "GET /a HTTP/1.1" 200 5 "-" "x"
1.2.3.4 - - [07/Dec/2026:12:00:00 +0000] "POST /b HTTP/1.1" 200 5 "-" "x"
garbage
1.2.3.4 - - [07/Dec/2026:12:00:01 +0000] "GET /c?q=1 HTTP/1.1" 200 5 "-" "x"
`
	bad := filepath.Join(dir, "bad.log")
	if err := os.WriteFile(good, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("# not a log\n\n1.2.3.4 - - [t] \"POST /b HTTP/1.1\" 200 5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{BodyBytes: 10})
	code, out, errs := runMain(t, context.Background(), "bench", "-q", "-n", "10", "-c", "2", "-k", "--access-log", good, srv.URL("/"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"Targets (2;", "GET /a", "GET /c?q=1", "Replayed 2 of 4 lines of " + good, "1 skipped, 1 malformed", "First left out: " + good + ":2: method POST not replayed"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	s := benchJSON(t, "-n", "9", "--access-log", good, "--replay-methods", "get,post", srv.URL("/"))
	if r := s.Replay; r == nil || r.Replayed != 3 || r.Malformed != 1 || r.Skipped != 0 || len(s.Targets) != 3 || s.Failed != 0 {
		t.Errorf("replay %+v, %d targets, %d failed", r, len(s.Targets), s.Failed)
	}
	code, _, errs = runMain(t, context.Background(), "bench", "-q", "--access-log", bad, srv.URL("/"))
	if code != 2 || !strings.HasPrefix(errs, "backbench bench: "+bad+":1: no request to replay: does not match the log format") ||
		strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("bad log: exit %d, stderr %q", code, errs)
	}
}

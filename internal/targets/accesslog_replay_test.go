package targets_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
)

// replayRun runs the replay of the access log file against url as bench
// --access-log builds it (plan.Options: plan stands above targets), with n
// requests on c workers, methods the --replay-methods ("" for the
// default), and returns the run's summary.
func replayRun(t *testing.T, url, file, methods string, n int64, c int, ka bool) stats.Summary {
	t.Helper()
	o := plan.Defaults(url)
	o.Requests, o.RequestsSet, o.Concurrency, o.ConcurrencySet, o.KeepAlive = n, true, c, c != 1, ka
	o.AccessLog, o.ReplayMethods = file, methods
	l, err := o.Build()
	if err != nil {
		t.Fatal(err)
	}
	run, err := execute.Run(context.Background(), l.Plan, execute.Options{Stderr: io.Discard, Quiet: true, Observe: true})
	if err != nil {
		t.Fatal(err)
	}
	return run.Summary
}

// TestAccessLogReplay replays an access log: the text report (report.Text,
// above targets, reads the result)
// has the targets table and the note of the lines left out, the summary
// the replay's counts; a log with no usable line is refused before the
// run, naming FILE:LINE.
func TestAccessLogReplay(t *testing.T) {
	if os.Getenv("BACKBENCH_ENGINE") != "" {
		t.Skip("runs once, with the default engine: it tests the replay, not the load path")
	}
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
	s := replayRun(t, srv.URL("/"), good, "", 10, 2, true)
	var b bytes.Buffer
	if err := report.Text(&b, &s, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Targets (2;", "GET /a", "GET /c?q=1", "Replayed 2 of 4 lines of " + good, "1 skipped, 1 malformed", "First left out: " + good + ":2: method POST not replayed"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	s = replayRun(t, srv.URL("/"), good, "get,post", 9, 1, false)
	if r := s.Replay; r == nil || r.Replayed != 3 || r.Malformed != 1 || r.Skipped != 0 || len(s.Targets) != 3 || s.Failed != 0 {
		t.Errorf("replay %+v, %d targets, %d failed", r, len(s.Targets), s.Failed)
	}
	o := plan.Defaults(srv.URL("/"))
	o.AccessLog = bad
	var pe *plan.Error
	if _, err := o.Build(); err == nil || !strings.HasPrefix(err.Error(), bad+":1: no request to replay: does not match the log format") ||
		strings.Contains(err.Error(), "\n") || !errors.As(err, &pe) {
		t.Errorf("bad log: %v", err)
	}
}

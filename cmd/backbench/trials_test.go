package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/trials"
)

// serialFCGI starts a built-in serial FastCGI backend of the given service
// time on a Unix socket at path ("" for a fresh one).
func serialFCGI(t *testing.T, delay time.Duration, path string) *fixtures.Server {
	t.Helper()
	opts := fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelSerial}, Delay: delay, BodyBytes: 5}
	if path == "" {
		return fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", opts)
	}
	s, err := fixtures.Start(fixtures.ProtoFCGI, "unix", path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// find returns the comparison of series against baseline at level c for
// metric, or fails.
func find(t *testing.T, cs []trials.Comparison, series, baseline string, c int, metric string) trials.Comparison {
	t.Helper()
	for _, x := range cs {
		if x.Series == series && x.Baseline == baseline && x.Concurrency == c && x.Metric == metric {
			return x
		}
	}
	t.Fatalf("no comparison of %q against %q at c=%d for %s in %+v", series, baseline, c, metric, cs)
	return trials.Comparison{}
}

// The trials' truth (verdicts, rounds, precision, short-trial notes, one
// p99) is tested in internal/sweep (trials_truth_test.go) and
// internal/driver (trials_bench_test.go); here, what needs the command:
// usage errors, and the design's warning written before any request.
// serialFCGI and find serve other tests of the command.

// TestTrialsBadInput: bad trial flags and files that are not results get
// one line on stderr and exit status 2, before any run.
func TestTrialsBadInput(t *testing.T) {
	dir := t.TempDir()
	notResult := filepath.Join(dir, "x.json")
	os.WriteFile(notResult, []byte(`{"hello": "world"}`), 0o644)
	notJSON := filepath.Join(dir, "y.json")
	os.WriteFile(notJSON, []byte("Requests per second: 1\n"), 0o644)
	u := "fcgi://127.0.0.1:1/x"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--repeat", "0", u}, "--repeat 0"},
		{[]string{"sweep", "-c", "1", "--repeat", "0", u}, "--repeat 0"},
		{[]string{"bench", "--precision", "150%", u}, "--precision"},
		{[]string{"bench", "--precision", "2", u}, "--precision"},
		{[]string{"bench", "--precision", "3%", "--max-repeat", "200", u}, "--max-repeat"},
		{[]string{"bench", "--max-repeat", "9", u}, "--max-repeat"},
		{[]string{"bench", "--repeat", "3", "--noise", "x", u}, "--noise"},
		{[]string{"bench", "--repeat", "3", "-g", filepath.Join(dir, "g"), u}, "-g"},
		{[]string{"sweep", "-c", "1", "--repeat", "3", "--baseline", "nope", "a=" + u}, "--baseline"},
		{[]string{"compare", notResult, notResult}, "not a bench or sweep result"},
		{[]string{"compare", notJSON, notJSON}, "not a bench or sweep result"},
		{[]string{"compare", filepath.Join(dir, "missing.json"), notResult}, "missing.json"},
		{[]string{"compare", notResult}, "two files"},
		{[]string{"compare", "--noise", "150%", notResult, notResult}, "--noise"},
	}
	for _, c := range cases {
		code, _, errs := runMain(t, context.Background(), c.args...)
		if code != exitUsage || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q: want 2 and one line with %q", c.args, code, errs, c.want)
		}
	}
}

// TestDesignJudgedFirst: --repeat 3 (bench and sweep) gets one line on
// stderr saying that 3 trials a side cannot reach p < 0.05 and that 4
// can, written before the backend answered any request; --repeat 4 gets
// none.
func TestDesignJudgedFirst(t *testing.T) {
	onceAcrossEngines(t)
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{BodyBytes: 5})
	for _, args := range [][]string{
		{"bench", "-q", "-n", "5", "--repeat", "3", srv.URL("/x")},
		{"sweep", "-q", "--out", t.TempDir(), "-n", "5", "-c", "1", "--repeat", "3", srv.URL("/x")},
	} {
		before := srv.Requests()
		errw := &firstWrite{requests: srv.Requests}
		var out bytes.Buffer
		code := Main(context.Background(), nil, args, &out, errw)
		lines := strings.Split(strings.TrimSpace(errw.buf.String()), "\n")
		if code != 0 || errw.at != before || srv.Requests() == before || len(lines) != 1 ||
			!strings.Contains(lines[0], "3 trials a side cannot give p < 0.05") || !strings.Contains(lines[0], "--repeat 4") {
			t.Errorf("%v: exit %d, %d requests before the first line of stderr (want 0), stderr:\n%s",
				args[0], code, errw.at-before, errw.buf.String())
		}
		args = slices.Clone(args)
		args[slices.Index(args, "3")] = "4"
		code, _, errs := runMain(t, context.Background(), args...)
		if code != 0 || strings.Contains(errs, "cannot give") {
			t.Errorf("%v --repeat 4: exit %d, stderr %q", args[0], code, errs)
		}
	}
	// An unreachable target: the line comes before the error.
	code, _, errs := runMain(t, context.Background(), "bench", "-q", "-n", "5", "--repeat", "3", "fcgi://unix:"+filepath.Join(t.TempDir(), "none.sock")+":/x")
	if code == 0 || !strings.HasPrefix(errs, "backbench: warning: 3 trials a side") {
		t.Errorf("unreachable target: exit %d, stderr %q", code, errs)
	}
}

// firstWrite records, at its first write, the requests a backend had
// answered: what was done before the line was written.
type firstWrite struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	at       int64
	requests func() int64
}

func (w *firstWrite) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf.Len() == 0 {
		w.at = w.requests()
	}
	return w.buf.Write(b)
}

package studyrun_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/studyfile"
	"github.com/backbench/backbench/internal/studyrun"
	"github.com/backbench/backbench/internal/trials"
)

// The runner's tests start real backends: backbench's own built-in ones
// (`backbench serve`, the study files' commands), from one build of
// cmd/backbench per test process (serveStudyBinary), run as
// studyrun.Options.Self; and php-fpm where it is installed.

// TestMain runs the package's tests, then removes the backbench binary
// serveStudyBinary built, if one was.
func TestMain(m *testing.M) {
	code := m.Run()
	if serveBin.dir != "" {
		os.RemoveAll(serveBin.dir)
	}
	os.Exit(code)
}

// serveBin is the one build of backbench for the tests that run studies.
var serveBin struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// serveStudyBinary builds backbench once for the package's tests and
// returns its path: the program a study runs for a backend command named
// "backbench". The study tests run once, with the default engine (make
// test's second pass, BACKBENCH_ENGINE set, tests the load path, which a
// study's runs share with the driver's), and not under -short.
func serveStudyBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts backends and measures them (-short)")
	}
	if os.Getenv("BACKBENCH_ENGINE") != "" {
		t.Skip("the study tests run once, with the default engine")
	}
	serveBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "bbstudyrunbin")
		if err != nil {
			serveBin.err = err
			return
		}
		serveBin.dir, serveBin.path = dir, filepath.Join(dir, "backbench")
		cmd := exec.Command("go", "build", "-o", serveBin.path, "github.com/backbench/backbench/cmd/backbench")
		if out, err := cmd.CombinedOutput(); err != nil {
			serveBin.err = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if serveBin.err != nil {
		t.Fatal(serveBin.err)
	}
	return serveBin.path
}

// serveStudyRun is one study run by studyrun.Run.
type serveStudyRun struct {
	res *study.Result
	// log is the runner's event lines (backbench study's stderr without
	// -q, off a terminal).
	log string
	// text is the study's text report (report.StudyText, backbench
	// study's stdout), and words its words one space apart: what it
	// says, wherever it wrapped its lines.
	text, words string
}

// failed says some configuration failed (backbench study's exit status
// 6).
func (r serveStudyRun) failed() bool { return len(r.res.FailedConfigurations()) > 0 }

// writeServeStudy writes a study file into a temporary directory.
func writeServeStudy(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "study.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// serveStudy runs the study file path with the overrides ov (backbench
// study's -c, -n, --repeat ...) and seed 7, in a temporary directory of
// its own.
func serveStudy(t *testing.T, path string, ov studyfile.Overrides) serveStudyRun {
	t.Helper()
	// A short TMPDIR (a socket's path is at most 107 bytes), removed
	// after the test: the directories of the configurations that failed
	// are kept there.
	tmp, err := os.MkdirTemp("", "bbt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	return serveStudyIn(t, tmp, path, ov)
}

// serveStudyIn is serveStudy with tmp as the temporary directory. The
// study's processes carry a marker in their environment; when the study
// has ended, no process may carry it.
func serveStudyIn(t *testing.T, tmp, path string, ov studyfile.Overrides) serveStudyRun {
	t.Helper()
	bin := serveStudyBinary(t)
	st, err := studyfile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Measure.Override(ov); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	mark := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	t.Setenv(serveStudyMark, mark)
	var log, stderr bytes.Buffer
	res, err := studyrun.Run(context.Background(), st, studyrun.Options{
		Exec:   execute.Options{Stderr: &stderr, Quiet: true, Version: "test"},
		Log:    &log,
		Seed:   7,
		Redact: func(a []string) []string { return load.RedactArgs(a, "") },
		Self:   bin,
	})
	if left := serveStudyMarked(mark, 10*time.Second); len(left) > 0 {
		t.Errorf("processes the study started are alive after it: %v", left)
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if err != nil {
		t.Fatalf("%v\n%s%s", err, log.String(), stderr.String())
	}
	var text bytes.Buffer
	if err := report.StudyText(&text, res, 100); err != nil {
		t.Fatal(err)
	}
	return serveStudyRun{res: res, log: log.String() + stderr.String(), text: text.String(), words: serveWords(text.String())}
}

// serveStudyMark is the variable of the marker every process of a study
// run by serveStudy inherits.
const serveStudyMark = "BBSTUDYRUN_MARK"

// serveWords is s's words one space apart.
func serveWords(s string) string { return strings.Join(strings.Fields(s), " ") }

// serveStudyMarked lists the live processes (not zombies, not this one)
// whose environment holds the marker mark, after waiting up to d for
// them to be gone (a process killed a moment ago may not have exited yet).
func serveStudyMarked(mark string, d time.Duration) []int {
	want := []byte(serveStudyMark + "=" + mark + "\x00")
	deadline := time.Now().Add(d)
	for {
		var pids []int
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			if err != nil || !bytes.Contains(env, want) {
				continue
			}
			if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
				if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && st[i+2] == 'Z' {
					continue // a zombie has exited
				}
			}
			pids = append(pids, pid)
		}
		if len(pids) == 0 || time.Now().After(deadline) {
			return pids
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ok fails the test when the study failed (a configuration failed, or
// res is missing), printing what it said.
func (r serveStudyRun) ok(t *testing.T) {
	t.Helper()
	if r.res == nil || r.failed() {
		t.Fatalf("the study failed\ntext:\n%s\nlog:\n%s", r.text, r.log)
	}
}

// serveSeriesLevels returns the levels of the series of res labelled
// label.
func serveSeriesLevels(t *testing.T, res *study.Result, label string) map[string]string {
	t.Helper()
	for _, s := range res.Series {
		if s.Label == label {
			return s.Levels
		}
	}
	t.Fatalf("no series %q", label)
	return nil
}

// serveOneFactor checks that every comparison of res differs in exactly
// its factor, and returns the comparisons of requests per second by
// factor, each keyed by the levels the two sides share.
func serveOneFactor(t *testing.T, res *study.Result) map[string]map[string]trials.Comparison {
	t.Helper()
	out := map[string]map[string]trials.Comparison{}
	for _, c := range res.Comparisons {
		a, b := serveSeriesLevels(t, res, c.Series), serveSeriesLevels(t, res, c.Baseline)
		var diff, shared []string
		for _, f := range res.Factors {
			if a[f.Name] != b[f.Name] {
				diff = append(diff, f.Name)
			} else {
				shared = append(shared, f.Name+"="+a[f.Name])
			}
		}
		if len(diff) != 1 || diff[0] != c.Factor {
			t.Errorf("comparison %s vs %s (factor %s) differs in %v", c.Series, c.Baseline, c.Factor, diff)
		}
		if c.Metric != trials.MetricRequestsPerSecond {
			continue
		}
		if out[c.Factor] == nil {
			out[c.Factor] = map[string]trials.Comparison{}
		}
		out[c.Factor][fmt.Sprintf("%s c=%d", strings.Join(shared, ","), c.Concurrency)] = c
	}
	return out
}

// serveOverrides are the overrides of backbench study's -c levels,
// -n requests, --repeat and --warmup (requests < 0, repeat 0 or warmup
// < 0: the file's).
func serveOverrides(levels string, requests int64, repeat int, warmup int64) studyfile.Overrides {
	ov := studyfile.Overrides{Levels: levels}
	if requests >= 0 {
		ov.Requests = &requests
	}
	if repeat > 0 {
		ov.Repeat = &repeat
	}
	if warmup >= 0 {
		ov.Warmup = &warmup
	}
	return ov
}

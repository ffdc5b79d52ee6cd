package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/backbench/backbench/internal/browsertest"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/backend"
	"github.com/backbench/backbench/internal/study"
)

// studyBin is one build of backbench for every test that runs the
// binary, in a directory put first in PATH by the study tests, so that a
// study file's "backbench serve" is it; TestMain removes it.
var studyBin struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// sharedBinary builds backbench once for the package's tests (each go
// build would link it again) and returns its path. Tests run it, never
// change it.
func sharedBinary(t *testing.T) string {
	t.Helper()
	studyBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "bbstudybin")
		if err != nil {
			studyBin.err = err
			return
		}
		studyBin.dir, studyBin.path = dir, filepath.Join(dir, "backbench")
		if out, err := exec.Command("go", "build", "-o", studyBin.path, ".").CombinedOutput(); err != nil {
			studyBin.err = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if studyBin.err != nil {
		t.Fatal(studyBin.err)
	}
	return studyBin.path
}

// studyBinary is the shared build for the study tests, which run once,
// with the default engine, and not under -short.
func studyBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts backends and measures them (-short)")
	}
	if os.Getenv("BACKBENCH_ENGINE") != "" {
		// make test runs this package a second time with the engine
		// forced, for the load path; a study's runs are the driver's,
		// tested there, and its lifecycle once is enough.
		t.Skip("the study tests run once, with the default engine")
	}
	return sharedBinary(t)
}

// studyRun is one run of backbench study.
type studyRun struct {
	// dir holds its study.json.
	dir            string
	code           int
	stdout, stderr string
	// words is stdout's words, one space apart: what the text says,
	// wherever it wrapped its lines to fit the width.
	words string
	res   *study.Result
}

// runStudy runs backbench study with args (the file last) in a directory
// of its own, with a marker in its environment that every process it
// starts inherits; when it has ended, no process may carry the marker.
func runStudy(t *testing.T, args ...string) studyRun {
	t.Helper()
	// A study tests what is made of its runs, not the load path: once.
	onceAcrossEngines(t)
	bin := studyBinary(t)
	out := t.TempDir()
	mark := fmt.Sprintf("BBSTUDY_MARK=%d-%d", os.Getpid(), time.Now().UnixNano())
	cmd := exec.Command(bin, append([]string{"study", "-q", "--seed", "7", "--out", out}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"), mark)
	// A short TMPDIR of its own (a socket's path is at most 107 bytes),
	// removed after the test: the directories of the configurations that
	// failed are kept there.
	tmp, err := os.MkdirTemp("", "bbt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err = cmd.Run()
	r := studyRun{dir: out, stdout: so.String(), stderr: se.String(), words: flat(so.String())}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if left := marked(mark); len(left) > 0 {
		t.Errorf("processes the study started are alive after it: %v", left)
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if b, err := os.ReadFile(filepath.Join(out, "study.json")); err == nil {
		var doc struct {
			Kind string `json:"kind"`
			study.Result
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("study.json: %v", err)
		}
		if doc.Kind != "study" {
			t.Errorf("study.json has kind %q", doc.Kind)
		}
		r.res = &doc.Result
	}
	return r
}

// flat is s's words one space apart (studyRun.words).
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

// marked lists the live processes whose environment holds mark, after
// waiting up to 10 s for them to be gone (a process killed a moment ago
// may not have exited yet).
func marked(mark string) []int {
	var pids []int
	waitFor(10*time.Second, func() bool {
		pids = markedNow(mark)
		return len(pids) == 0
	})
	return pids
}

// markedNow lists the live processes whose environment holds mark.
func markedNow(mark string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		if bytes.Contains(env, []byte(mark)) {
			if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
				if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && st[i+2] == 'Z' {
					continue // a zombie has exited
				}
			}
			pids = append(pids, pid)
		}
	}
	return pids
}

// writeStudy writes a study file into a temporary directory.
func writeStudy(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "study.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// seriesLevels returns the levels of the series labelled label.
func seriesLevels(t *testing.T, res *study.Result, label string) map[string]string {
	t.Helper()
	for _, s := range res.Series {
		if s.Label == label {
			return s.Levels
		}
	}
	t.Fatalf("no series %q", label)
	return nil
}

// TestStudyKeepAliveCost: a prefork pool of 2 serial workers (php-fpm's
// children) at c=32 with keep-alive on against off: the kept connections
// hold the workers, the other connections' requests queue behind them, so
// keep-alive is faster in req/s (no connects) but its p99 is higher. The
// conclusion names the p99 cost, and a note gives the cause. A busy
// machine can leave a verdict undecided: the study then runs once more.
// A long test (make test-long); make test holds the sentence's rule
// through internal/study's TestConclusionNamesCost.
func TestStudyKeepAliveCost(t *testing.T) {
	skipUnlessLong(t)
	onceAcrossEngines(t)
	f := writeStudy(t, `question: Does keep-alive pay for a pool of 2 workers at c=32?
factors:
  keepalive: [off, on]
backends:
  - name: pool
    command: [backbench, serve, --protocol, http, --processes, "2", --model, serial, --listen, "{listen}"]
    url: "http://{target}/"
measure:
  kind: bench
  concurrency: [32]
  requests: 400
  repeat: 6
`)
	var a study.Answer
	for try := 1; try <= 2; try++ {
		r := runStudy(t, f)
		if r.code != 0 || r.res == nil || len(r.res.Answers) != 1 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		a = r.res.Answers[0]
		if strings.HasPrefix(a.Conclusion, "keepalive on against off: faster") && strings.Contains(a.Conclusion, "; but p99 ") {
			break
		}
		t.Logf("try %d: %s\n%s", try, a.Conclusion, strings.Join(a.Details, "\n"))
	}
	if !strings.HasPrefix(a.Conclusion, "keepalive on against off: faster") || !regexp.MustCompile(`; but p99 [0-9.]+× higher`).MatchString(a.Conclusion) {
		t.Fatalf("conclusion %q: want faster, but p99 higher", a.Conclusion)
	}
	if note := a.Details[len(a.Details)-1]; !strings.Contains(note, "kept connections outnumber the pool's workers: at c=32") {
		t.Errorf("note %q: want the kept connections outnumbering the workers", note)
	}
}

// lifecycleStudy is a study of two configurations: a good built-in
// backend and the one under test (command and options given).
func lifecycleStudy(bad string) string {
	return `question: What happens to a bad backend?
factors:
  which: [good, bad]
backends:
  - name: good
    when: {which: good}
    command: [backbench, serve, --protocol, http, --listen, "{listen}"]
    url: "http://{target}/"
` + bad + `
measure:
  kind: sweep
  concurrency: [1, 2]
  requests: 50
  repeat: 1
`
}

// TestStudyFaultsExitStatus: a study of a good backend beside one that
// exits at start, one that never listens, one that answers 500 to its
// verification and one that ignores SIGTERM exits with status 6
// (exitStudyFailed), its stderr naming a failure and how many, after
// writing study.json and study.html with every configuration's failure.
// The one that ignores SIGTERM, killed, is no failure.
func TestStudyFaultsExitStatus(t *testing.T) {
	onceAcrossEngines(t)
	f := writeStudy(t, `question: What happens to bad backends?
factors:
  which: [good, start, listen, verify, sigterm]
backends:
  - name: good
    when: {which: good}
    command: [backbench, serve, --protocol, http, --listen, "{listen}"]
    url: "http://{target}/"
  - name: start
    when: {which: start}
    command: [sh, -c, "echo cannot open the config file >&2; exit 3", "{listen}"]
    url: "http://{target}/"
  - name: listen
    when: {which: listen}
    command: [sh, -c, "exec sleep 30", "{listen}"]
    url: "http://{target}/"
    start_timeout: 1s
  - name: verify
    when: {which: verify}
    command: [backbench, serve, --protocol, http, --status, "500", --listen, "{listen}"]
    url: "http://{target}/"
  - name: sigterm
    when: {which: sigterm}
    command: [backbench, serve, --protocol, http, --ignore-sigterm, --listen, "{listen}"]
    url: "http://{target}/"
    stop: {grace: 300ms}
measure:
  kind: sweep
  concurrency: [1]
  requests: 50
  repeat: 1
`)
	r := runStudy(t, f)
	if r.code != exitStudyFailed {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, exitStudyFailed, r.stdout, r.stderr)
	}
	if r.res == nil {
		t.Fatal("no study.json")
	}
	if _, err := os.Stat(filepath.Join(r.dir, "study.html")); err != nil {
		t.Error(err)
	}
	kinds := map[string]string{}
	for _, c := range r.res.Configurations {
		kinds[c.Levels["which"]] = c.FailureKind
	}
	want := map[string]string{"good": "", "start": study.FailStart, "listen": study.FailListen, "verify": study.FailVerify, "sigterm": ""}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Errorf("failure kinds %v, want %v", kinds, want)
	}
	if !strings.Contains(r.stderr, "3 of 5 configurations failed: backend ") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("stderr does not name the failures in one line:\n%s", r.stderr)
	}
}

// TestStudyInterrupted: SIGINT during a study stops every backend and
// writes what finished, marked incomplete; a second SIGINT exits at once,
// and its backends die with it.
func TestStudyInterrupted(t *testing.T) {
	for _, twice := range []bool{false, true} {
		t.Run(map[bool]string{false: "once", true: "twice"}[twice], func(t *testing.T) {
			bin := studyBinary(t)
			out := t.TempDir()
			f := writeStudy(t, lifecycleStudy(`  - name: bad
    command: [backbench, serve, --protocol, http, --delay, 1ms, --listen, "{listen}"]
    url: "http://{target}/"`))
			mark := fmt.Sprintf("BBSTUDY_MARK=%d-%d", os.Getpid(), time.Now().UnixNano())
			cmd := exec.Command(bin, "study", "--out", out, "-n", "100000", "--repeat", "3", f)
			cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"), mark)
			var so, se syncBuffer
			cmd.Stdout, cmd.Stderr = &so, &se
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if !waitFor(60*time.Second, func() bool { return strings.Contains(se.String(), "round 1 of 3") }) {
				cmd.Process.Kill()
				t.Fatalf("the study never began its first round:\n%s", se.String())
			}
			time.Sleep(300 * time.Millisecond)
			cmd.Process.Signal(syscall.SIGINT)
			if twice {
				time.Sleep(20 * time.Millisecond)
				cmd.Process.Signal(syscall.SIGINT)
			}
			if code := exitCode(t, cmd, 60*time.Second); code != exitSIGINT {
				t.Errorf("exit %d, want %d\n%s", code, exitSIGINT, se.String())
			}
			if left := marked(mark); len(left) > 0 {
				t.Errorf("processes the study started are alive after SIGINT: %v", left)
				for _, pid := range left {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			if twice {
				return
			}
			b, err := os.ReadFile(filepath.Join(out, "study.json"))
			if err != nil {
				t.Fatalf("no study.json after SIGINT: %v", err)
			}
			var res study.Result
			if err := json.Unmarshal(b, &res); err != nil || !res.Incomplete {
				t.Errorf("study.json not marked incomplete (%v)", err)
			}
			if !strings.Contains(so.String(), "INCOMPLETE") {
				t.Errorf("the text does not say the study is incomplete:\n%s", so.String())
			}
		})
	}
}

// killedStudy is a study of the built-in HTTP backend on TCP and on a
// Unix socket, serve's flags FLAGS added, long enough to be killed in.
const killedStudy = `question: Does anything survive a killed study?
factors:
  transport: [tcp, unix]
backends:
  - name: serve
    command: [backbench, serve, --protocol, http, FLAGS--delay, 1ms, --listen, "{listen}"]
    url: "http://{target}/"
    stop: {grace: 300ms}
measure:
  kind: sweep
  concurrency: [1, 2]
  requests: 100000
  repeat: 3
`

// TestStudyKilled: SIGKILL of backbench during a study of two built-in
// backends (one on TCP, one on a Unix socket; then the same as prefork
// pools whose master and children ignore SIGTERM) leaves nothing: within
// 10 s no process of the study is alive and its directory (the sockets,
// the configurations' files) is gone, the watcher that did it included,
// and the watcher says what it stopped.
func TestStudyKilled(t *testing.T) {
	onceAcrossEngines(t)
	for _, tc := range []struct {
		name, flags string
		killed      bool
	}{
		{"serve", "", false},
		{"children ignore SIGTERM", `--processes, "2", --ignore-sigterm, `, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := studyBinary(t)
			// A short TMPDIR of its own: the study's directory is made
			// there, and the socket path must fit in 107 bytes.
			tmp, err := os.MkdirTemp("", "bbk")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(tmp) })
			f := writeStudy(t, strings.Replace(killedStudy, "FLAGS", tc.flags, 1))
			mark := fmt.Sprintf("BBSTUDY_MARK=%d-%d", os.Getpid(), time.Now().UnixNano())
			cmd := exec.Command(bin, "study", "--out", t.TempDir(), f)
			cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"), mark, "TMPDIR="+tmp)
			var so, se syncBuffer
			cmd.Stdout, cmd.Stderr = &so, &se
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waited := make(chan struct{})
			go func() { cmd.Wait(); close(waited) }()
			t.Cleanup(func() {
				cmd.Process.Kill()
				for _, pid := range markedNow(mark) {
					syscall.Kill(pid, syscall.SIGKILL)
				}
				<-waited
			})
			if !waitFor(60*time.Second, func() bool { return strings.Contains(se.String(), "round 1 of 3") }) {
				t.Fatalf("the study never began its first round:\n%s", se.String())
			}
			time.Sleep(300 * time.Millisecond)
			// backbench, its watcher, and each backend's processes.
			before := markedNow(mark)
			want := 4
			if tc.killed {
				want = 8 // two masters with two children each
			}
			if len(before) < want {
				t.Fatalf("%d processes of the study before the kill (%v), want %d or more", len(before), before, want)
			}
			ents, _ := os.ReadDir(tmp)
			if len(ents) != 1 || !strings.HasPrefix(ents[0].Name(), "bbst") {
				t.Fatalf("the study's directory: %v", ents)
			}
			cmd.Process.Signal(syscall.SIGKILL)
			killed := time.Now()
			var left []int
			gone := waitFor(10*time.Second, func() bool {
				left = markedNow(mark)
				ents, _ = os.ReadDir(tmp)
				return len(left) == 0 && len(ents) == 0
			})
			if !gone {
				t.Fatalf("%v after SIGKILL: alive %v, in TMPDIR %v\n%s", time.Since(killed), left, ents, se.String())
			}
			t.Logf("everything gone %v after SIGKILL", time.Since(killed).Round(time.Millisecond))
			select {
			case <-waited: // the watcher held stderr: it has exited
			case <-time.After(10 * time.Second):
				t.Fatal("stderr still open 10 s after: the watcher has not exited")
			}
			if !strings.Contains(se.String(), "watcher: backbench (pid") || tc.killed != strings.Contains(se.String(), "SIGKILL needed") {
				t.Errorf("the watcher's line:\n%s", se.String())
			}
		})
	}
}

// TestStudyLeftovers: a study finds what an earlier, killed run left (here
// made by hand: a process with the marker of a run that no longer runs, and
// a directory with its marker file), names it on stderr with its PIDs,
// stops it and removes the directory; a process and a directory without
// the marker are not touched.
func TestStudyLeftovers(t *testing.T) {
	onceAcrossEngines(t)
	bin := studyBinary(t)
	tmp, err := os.MkdirTemp("", "bbl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	dead := fmt.Sprintf("%d-1", os.Getpid()) // this PID, another start time: a run that is gone
	sleep := func(env ...string) *exec.Cmd {
		c := exec.Command("sleep", "120")
		c.Env = append(os.Environ(), env...)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return c
	}
	left := sleep(backend.RunEnv + "=" + dead)
	plain := sleep()
	for name, id := range map[string]string{"bbstold": dead, "bbstmine": ""} {
		d := filepath.Join(tmp, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if id != "" {
			if err := os.WriteFile(filepath.Join(d, backend.DirMarker), []byte(id+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The marker is readable once sleep has exec'd.
	if !waitFor(10*time.Second, func() bool { return bytes.Contains(envBlock(left.Process.Pid), []byte(backend.RunEnv)) }) {
		t.Fatal("the leftover never had its marker")
	}
	f := writeStudy(t, strings.Replace(strings.Replace(killedStudy, "FLAGS", "", 1), "requests: 100000", "requests: 20", 1))
	cmd := exec.Command(bin, "study", "-q", "-c", "1", "--repeat", "1", "--out", t.TempDir(), f)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"), "TMPDIR="+tmp)
	var se bytes.Buffer
	cmd.Stderr = &se
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, se.String())
	}
	for _, want := range []string{fmt.Sprintf("an earlier run (backbench pid %d, no longer running) left 1 process: pid %d (sleep)", os.Getpid(), left.Process.Pid),
		"bbstold", "stopped them", "removed the directories"} {
		if !strings.Contains(se.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, se.String())
		}
	}
	if strings.Contains(se.String(), strconv.Itoa(plain.Process.Pid)) {
		t.Errorf("the process without the marker is named:\n%s", se.String())
	}
	if !backend.Gone(left.Process.Pid) {
		t.Error("the leftover still runs")
	}
	if backend.Gone(plain.Process.Pid) {
		t.Error("the process without the marker was stopped")
	}
	if _, err := os.Stat(filepath.Join(tmp, "bbstold")); !os.IsNotExist(err) {
		t.Errorf("the leftover directory is still there (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(tmp, "bbstmine")); err != nil {
		t.Errorf("the directory without the marker was touched: %v", err)
	}
}

// envBlock returns the environment of process pid, as /proc shows it.
func envBlock(pid int) []byte {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	return b
}

// syncBuffer is a bytes.Buffer written by a command and read by a test
// at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStudyPageInBrowser: the page of a study (backbench report
// study.json) opens in headless Chromium with the answers first, in
// sight, the factors' charts drawn, and nothing wider than the window.
func TestStudyPageInBrowser(t *testing.T) {
	bin := browsertest.Chromium(t)
	r := runStudy(t, "-c", "1,2", "-n", "60", "--repeat", "2", "../../studies/2008-sweep.yaml")
	if r.code != 0 || r.res == nil {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	page := filepath.Join(r.dir, "study.html")
	if own, err := os.ReadFile(page); err != nil || !strings.Contains(string(own), "<title>"+html.EscapeString(r.res.Question)+"</title>") {
		t.Errorf("study.html's title is not the question (%v)", err)
	}
	if out, err := exec.Command(studyBinary(t), "report", "-o", page, filepath.Join(r.dir, "study.json")).CombinedOutput(); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	tab := browsertest.Open(t, bin, "file://"+page, 1280, 800)
	var l browsertest.Layout
	tab.Eval(browsertest.ReadLayout, &l)
	tab.CheckQuiet()
	var want []string
	for _, a := range r.res.Answers {
		want = append(want, a.Conclusion)
	}
	if got := l.Answers["r1"]; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("answers on the page:\n%q\nwant\n%q", got, want)
	}
	if l.FirstAnswer <= 0 || l.FirstAnswer > l.ViewportH {
		t.Errorf("the first answer ends at %v, outside the first screen (%v)", l.FirstAnswer, l.ViewportH)
	}
	if l.ScrollWidth > l.ClientWidth || len(l.Wide) > 0 {
		t.Errorf("wider than the window: %v", l.Wide)
	}
	// The question is the page's title and heading; the study's start
	// and length are recorded and shown.
	var title, h1, prov string
	tab.Eval(`document.title`, &title)
	tab.Eval(`document.querySelector('h1').textContent`, &h1)
	tab.Eval(`document.querySelector('section.study dl.prov').textContent`, &prov)
	if title != r.res.Question || h1 != r.res.Question {
		t.Errorf("title %q, heading %q; want the question %q", title, h1, r.res.Question)
	}
	if r.res.StartedAt <= 0 || r.res.EndedAt < r.res.StartedAt || !strings.Contains(prov, "started") || strings.Contains(prov, "no start time") {
		t.Errorf("started %v, ended %v; provenance %q", r.res.StartedAt, r.res.EndedAt, prov)
	}
	// No table breaks a word: a cell of one word (headers, names, levels)
	// keeps it on one line; commands wrap inside their own cells.
	var broken []string
	tab.Eval(brokenWords, &broken)
	if len(broken) > 0 {
		t.Errorf("table cells whose one word is broken across lines: %q", broken)
	}
	var charts, commands int
	tab.Eval(`document.querySelectorAll('section.study svg').length`, &charts)
	tab.Eval(`[...document.querySelectorAll('section.study td code')].filter(c => c.textContent.includes('backbench serve')).length`, &commands)
	if charts < 4 || commands != 2 {
		t.Errorf("%d charts (want 2 per factor), %d commands shown (want 2)", charts, commands)
	}
}

// brokenWords lists the table cells of a page (outside code) whose text
// is one word (letters, digits, _ and .) laid out on more than one line.
const brokenWords = `[...document.querySelectorAll('th, td')].filter(c => !c.querySelector('code') && /^[\w.]+$/.test(c.textContent.trim())).filter(c => {
	const r = document.createRange(); r.selectNodeContents(c);
	return new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top))).size > 1;
}).map(c => c.textContent.trim())`

// TestStudyRunsItself: a backend command named "backbench" (every seed's
// `backbench serve`) runs the backbench that runs the study, also when it
// is not on PATH (a fresh clone's bin/backbench).
func TestStudyRunsItself(t *testing.T) {
	bin := studyBinary(t)
	out := t.TempDir()
	cmd := exec.Command(bin, "study", "-q", "--quick", "--out", out, "../../studies/2013-prefork.yaml")
	cmd.Env = append(os.Environ(), "PATH=/usr/bin:/bin")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	b, err := os.ReadFile(filepath.Join(out, "study.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res study.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Configurations {
		if c.Failure != "" || c.Starts != 1 || c.Command[0] != "backbench" {
			t.Errorf("%s: %d starts, failure %q, command %q", c.Name, c.Starts, c.Failure, c.Command)
		}
	}
}

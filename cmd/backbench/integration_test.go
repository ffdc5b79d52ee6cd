package main

// Integration tests against real backends started by scripts/backends.sh:
// bench with and without keep-alive over TCP and Unix sockets, the probe's
// verdicts, and a short sweep. php-fpm, fcgiwrap and Thin run here, in
// `make test` and CI (where a missing one fails the test); the others are in
// integration_more_test.go, under `make integration`.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/realbackend"
)

// Bodies of the apps that scripts/backends.sh writes.
const (
	realSmallLen = 13    // "hello, world\n"
	realBigLen   = 10240 // "x" × 10239 and "\n"
	realSlowMs   = 20    // the slow endpoint's sleep
)

// realBackend is a backend started by scripts/backends.sh start.
type realBackend struct {
	name string
	dir  string
	// urls are the app's roots by kind: "tcp", "unix" (and "fcgi-unix",
	// the pool behind nginx).
	urls map[string]string
	// paths are the endpoints: "small", "big", "slow".
	paths   map[string]string
	docRoot string
	pids    []int
}

// url returns the target of endpoint on the kind of listener.
func (b *realBackend) url(kind, endpoint string) string {
	return strings.TrimSuffix(b.urls[kind], "/") + b.paths[endpoint]
}

// fcgiArgs returns the flags a FastCGI target needs.
func (b *realBackend) fcgiArgs(url string) []string {
	if strings.HasPrefix(url, "fcgi://") {
		return []string{"--document-root", b.docRoot}
	}
	return nil
}

// backendsScript is the absolute path of scripts/backends.sh.
func backendsScript(tb testing.TB) string {
	tb.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "scripts", "backends.sh"))
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// startReal starts backend name on TCP and a Unix socket and stops it when
// the test ends. A backend that is not installed skips the test, or, when
// required, goes through realbackend.Missing (fails under CI=true).
func startReal(tb testing.TB, name string, required bool) *realBackend {
	tb.Helper()
	script := backendsScript(tb)
	if _, err := exec.LookPath("bash"); err != nil {
		tb.Skip("no bash")
	}
	// Not tb.TempDir: Unix socket paths must stay under 108 bytes.
	dir, err := os.MkdirTemp("", "bbr")
	if err != nil {
		tb.Fatal(err)
	}
	b := &realBackend{name: name, dir: dir, urls: map[string]string{}, paths: map[string]string{}}
	tb.Cleanup(func() { b.stop(tb, script) })
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script, "start", name, dir)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 3:
		msg := strings.TrimSpace(errb.String())
		if required {
			realbackend.Missing(tb, msg)
		}
		realbackend.Skip(tb, msg)
	case err != nil:
		tb.Fatalf("backends.sh start %s: %v\n%s", name, err, errb.String())
	}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 3 && f[0] == "url":
			b.urls[f[1]] = f[2]
		case len(f) == 3 && f[0] == "path":
			b.paths[f[1]] = f[2]
		case len(f) == 2 && f[0] == "docroot":
			b.docRoot = f[1]
		case len(f) == 2 && f[0] == "pid":
			pid, err := strconv.Atoi(f[1])
			if err != nil {
				tb.Fatalf("backends.sh: bad line %q", sc.Text())
			}
			b.pids = append(b.pids, pid)
		case len(f) == 2 && f[0] == "name":
		default:
			tb.Fatalf("backends.sh: unexpected line %q", sc.Text())
		}
	}
	if b.urls["tcp"] == "" || b.urls["unix"] == "" || len(b.pids) == 0 || len(b.paths) != 3 {
		tb.Fatalf("backends.sh start %s printed:\n%s", name, out.String())
	}
	return b
}

// stop runs backends.sh stop and checks that every process it started is
// gone (a zombie left to an init that does not reap counts as gone).
func (b *realBackend) stop(tb testing.TB, script string) {
	defer os.RemoveAll(b.dir)
	if len(b.pids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "bash", script, "stop", b.dir).CombinedOutput(); err != nil {
		tb.Errorf("backends.sh stop %s: %v\n%s", b.dir, err, out)
	}
	for _, pid := range b.pids {
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			// The state is the field after the ")" of the command name.
			if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && st[i+2] != 'Z' {
				tb.Errorf("%s: process %d still runs after backends.sh stop", b.name, pid)
			}
		}
	}
}

// realWant is what a backend really does, learnt by probing it (see
// docs/recipes.md).
type realWant struct {
	name string
	// keepAlive: the server keeps the connection with -k (FastCGI:
	// FCGI_KEEP_CONN; HTTP/1.1), and http10KeepAlive with --http1.0 -k.
	keepAlive, http10KeepAlive bool
	// probe are the verdicts, the same over TCP and Unix sockets.
	probe map[string]string
	// summary are phrases the probe's summary must hold.
	summary []string
}

// realCI are the backends that CI installs and runs.
var realCI = []realWant{
	{name: "php-fpm", keepAlive: true,
		probe: map[string]string{"get_values": "answered", "keep_conn": "honored",
			"max_requests_per_connection": "not reached", "multiplexing": "lost", "unknown_role": "closed",
			"roles": "served", "unknown_type": "closed", "abort": "END_REQUEST", "params": "not served", "response": "answered"},
		summary: []string{"-k is meaningful", "extra connections wait for the whole run", "lost silently"}},
	{name: "fcgiwrap", keepAlive: true,
		probe: map[string]string{"get_values": "answered", "keep_conn": "honored",
			"max_requests_per_connection": "not reached", "multiplexing": "rejected", "unknown_role": "closed",
			"roles": "served", "unknown_type": "UNKNOWN_TYPE", "abort": "END_REQUEST", "params": "served", "response": "answered"},
		summary: []string{"-k is meaningful", "libfcgi answers FCGI_MAX_CONNS=1 in every worker"}},
	{name: "thin", keepAlive: true, http10KeepAlive: true,
		probe: map[string]string{"http11_persistent": "honored", "http10_keep_alive": "honored",
			"max_requests_per_connection": "not reached", "idle_timeout_seconds": "not reached",
			"pipelining": "first only", "framing": "content-length", "server": "present"},
		summary: []string{"-k is meaningful over HTTP/1.1", "ab -k works", "pipelined requests gets no answer"}},
}

// TestRealBackends runs bench and probe against php-fpm, fcgiwrap and Thin.
func TestRealBackends(t *testing.T) {
	for _, w := range realCI {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			testRealBackend(t, w, true)
		})
	}
}

// testRealBackend starts w.name and checks bench and probe on both
// listeners.
func testRealBackend(t *testing.T, w realWant, required bool) {
	b := startReal(t, w.name, required)
	for _, kind := range []string{"tcp", "unix"} {
		t.Run(kind, func(t *testing.T) {
			realBench(t, b, w, kind)
			realProbe(t, b, w, kind)
		})
	}
}

// realBench runs bench on both bodies, with and without keep-alive (and
// HTTP/1.0 for HTTP), and checks the counts, the document length and the
// keep-alive accounting; then the slow endpoint.
func realBench(t *testing.T, b *realBackend, w realWant, kind string) {
	const n = 30
	type mode struct {
		name   string
		args   []string
		kept   bool // every response leaves the connection open
		http10 bool
	}
	modes := []mode{{"close", nil, false, false}, {"keepalive", []string{"-k"}, w.keepAlive, false}}
	if strings.HasPrefix(b.urls[kind], "http") {
		modes = append(modes, mode{"http1.0", []string{"--http1.0"}, false, true},
			mode{"http1.0-keepalive", []string{"--http1.0", "-k"}, w.http10KeepAlive, true})
	}
	for _, body := range []struct {
		endpoint string
		length   int64
	}{{"small", realSmallLen}, {"big", realBigLen}} {
		for _, m := range modes {
			t.Run(body.endpoint+"/"+m.name, func(t *testing.T) {
				url := b.url(kind, body.endpoint)
				args := append([]string{"-n", strconv.Itoa(n), "-c", "3", "-s", "10"}, m.args...)
				args = append(append(args, b.fcgiArgs(url)...), url)
				s := benchJSON(t, args...)
				if s.Complete != n || s.Failed != 0 || s.Non2xx != 0 {
					t.Fatalf("complete %d failed %d non-2xx %d errors %v notes %v", s.Complete, s.Failed, s.Non2xx, s.ErrorSamples, s.Notes)
				}
				if s.DocumentLength != body.length || s.HTMLTransferred != n*body.length {
					t.Errorf("document length %d, HTML transferred %d; want %d and %d", s.DocumentLength, s.HTMLTransferred, body.length, n*body.length)
				}
				wantKept := int64(0)
				if m.kept {
					wantKept = n
				}
				if s.KeepAliveRequests != wantKept {
					t.Errorf("keep-alive requests %d, want %d (reconnects %d)", s.KeepAliveRequests, wantKept, s.Reconnects)
				}
				asked := len(m.args) > 0 && m.args[len(m.args)-1] == "-k"
				if hasNote := notesHave(s.Notes, "-k was asked but the server closed"); hasNote != (asked && !m.kept) {
					t.Errorf("notes %q: the note on a server that does not keep connections is there: %v, want %v", s.Notes, hasNote, asked && !m.kept)
				}
			})
		}
	}
	t.Run("slow", func(t *testing.T) {
		url := b.url(kind, "slow")
		s := benchJSON(t, append(append([]string{"-n", "8", "-c", "2", "-k", "-s", "10"}, b.fcgiArgs(url)...), url)...)
		if s.Complete != 8 || s.Failed != 0 || s.DocumentLength != realSmallLen {
			t.Fatalf("complete %d failed %d length %d errors %v", s.Complete, s.Failed, s.DocumentLength, s.ErrorSamples)
		}
		// The endpoint sleeps 20 ms: no request can be quicker.
		if s.ConnectionTimes.Total.Min < realSlowMs-1 {
			t.Errorf("the slow endpoint answered in %v ms, under its %d ms sleep", s.ConnectionTimes.Total.Min, realSlowMs)
		}
	})
}

// realProbe probes the small endpoint and checks every verdict and the
// summary's phrases.
func realProbe(t *testing.T, b *realBackend, w realWant, kind string) {
	t.Run("probe", func(t *testing.T) {
		url := b.url(kind, "small")
		args := append([]string{"probe", "--format", "json", "-s", "5", "--idle-max", "2", "--max-requests", "50"}, b.fcgiArgs(url)...)
		code, out, errs := runMain(t, context.Background(), append(args, url)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var rep map[string]json.RawMessage
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("bad JSON: %v\n%s", err, out)
		}
		for key, want := range w.probe {
			var c struct {
				Verdict  string `json:"verdict"`
				Evidence string `json:"evidence"`
			}
			if err := json.Unmarshal(rep[key], &c); err != nil {
				t.Errorf("%s: %v", key, err)
				continue
			}
			if c.Verdict != want {
				t.Errorf("%s: %q (%s), want %q", key, c.Verdict, c.Evidence, want)
			}
		}
		var summary []string
		if err := json.Unmarshal(rep["summary"], &summary); err != nil {
			t.Fatalf("summary: %v", err)
		}
		all := strings.Join(summary, "\n")
		for _, phrase := range w.summary {
			if !strings.Contains(all, phrase) {
				t.Errorf("summary lacks %q:\n%s", phrase, all)
			}
		}
	})
}

// TestRealSweep runs a short sweep over php-fpm (TCP and Unix, with and
// without keep-alive) and Thin (TCP and Unix).
func TestRealSweep(t *testing.T) {
	fpm := startReal(t, "php-fpm", true)
	thin := startReal(t, "thin", true)
	code, out, errs, dir := sweepOut(t, "-q", "-n", "24", "-c", "1,4", "--warmup", "4", "-s", "10",
		"--keepalive-modes", "off,on", "--document-root", fpm.docRoot,
		"fpm tcp="+fpm.url("tcp", "small"), "fpm unix="+fpm.url("unix", "small"))
	if code != 0 {
		t.Fatalf("php-fpm sweep: exit %d: %s\n%s", code, errs, out)
	}
	checkRealSweep(t, dir, []string{"fpm tcp no-ka", "fpm tcp ka", "fpm unix no-ka", "fpm unix ka"}, realSmallLen)
	code, out, errs, dir = sweepOut(t, "-q", "-n", "24", "-c", "1,4", "--warmup", "4", "-s", "10", "-k",
		"thin tcp="+thin.url("tcp", "big"), "thin unix="+thin.url("unix", "big"))
	if code != 0 {
		t.Fatalf("Thin sweep: exit %d: %s\n%s", code, errs, out)
	}
	checkRealSweep(t, dir, []string{"thin tcp", "thin unix"}, realBigLen)
}

// checkRealSweep checks the sweep's files: the series in order, each level
// run whole with no failure and the right document length.
func checkRealSweep(t *testing.T, dir string, labels []string, length int64) {
	t.Helper()
	sw, rows := readSweep(t, dir)
	if len(sw.Series) != len(labels) || len(rows) != 1+2*len(labels) {
		t.Fatalf("%d series, %d CSV rows; want %d and %d", len(sw.Series), len(rows), len(labels), 1+2*len(labels))
	}
	for i, se := range sw.Series {
		if se.Label != labels[i] || len(se.Levels) != 2 || se.Stop != nil {
			t.Errorf("series %d: %q, %d levels, stop %+v; want %q, 2 levels", i, se.Label, len(se.Levels), se.Stop, labels[i])
			continue
		}
		for _, l := range se.Levels {
			if l.Complete != 24 || l.Failed != 0 || l.DocumentLength != length || l.RequestsPerSecond <= 0 {
				t.Errorf("%s at -c %d: complete %d failed %d length %d req/s %v errors %v",
					se.Label, l.Concurrency, l.Complete, l.Failed, l.DocumentLength, l.RequestsPerSecond, l.ErrorSamples)
			}
		}
	}
}

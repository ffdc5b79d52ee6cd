package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
)

// TestBenchProgress: without a terminal, ab's heartbeat lines (every tenth
// of -n, every 100 at least; every tenth of -t with -t alone); on a
// terminal, one live line redrawn and erased before the report; -q
// silences both.
func TestBenchProgress(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	heartbeat := func(n int) string {
		var b strings.Builder
		for k := max(n/10, 100); k < n; k += max(n/10, 100) {
			fmt.Fprintf(&b, "Completed %d requests\n", k)
		}
		return b.String() + fmt.Sprintf("Finished %d requests\n", n)
	}
	for _, n := range []int{1000, 200} {
		code, out, errs := runMain(t, context.Background(), "bench", "-k", "-c", "2", "-n", strconv.Itoa(n), srv.URL("/"))
		if want := "Benchmarking " + srv.URL("/") + " (be patient)\n" + heartbeat(n); code != 0 || errs != want {
			t.Errorf("-n %d: exit %d, stderr %q, want %q", n, code, errs, want)
		}
		if strings.Contains(out, "Completed") {
			t.Error("heartbeat on stdout")
		}
	}
	if code, _, errs := runMain(t, context.Background(), "bench", "-q", "-n", "1000", srv.URL("/")); code != 0 || errs != "" {
		t.Errorf("-q: exit %d, stderr %q", code, errs)
	}

	// -t alone, the real binary with stderr a pipe: a line every tenth of
	// the time limit.
	bin := buildBinary(t)
	slow := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{Delay: 2 * time.Millisecond})
	cmd := exec.Command(bin, "bench", "-k", "-t", "1", slow.URL("/"))
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("-t: %v %s", err, errb.String())
	}
	if lines := regexp.MustCompile(`(?m)^Completed \d+ requests$`).FindAllString(errb.String(), -1); len(lines) < 5 || len(lines) > 9 ||
		!regexp.MustCompile(`\nFinished \d+ requests\n$`).MatchString(errb.String()) {
		t.Errorf("-t 1: stderr %q", errb.String())
	}

	// A terminal (pretended): the live line, erased; no heartbeat.
	old, oldEvery := isTerminal, ProgressEvery
	isTerminal, ProgressEvery = func(io.Writer) bool { return true }, 5*time.Millisecond
	t.Cleanup(func() { isTerminal, ProgressEvery = old, oldEvery })
	code, out, errs := runMain(t, context.Background(), "bench", "-k", "-n", "300", slow.URL("/"))
	if code != 0 || !regexp.MustCompile(`\r\x1b\[K\d+\.\d s: \d+/300 requests, \d+ req/s, 0 failed, ETA \d+s`).MatchString(errs) ||
		!strings.HasSuffix(errs, "\r\x1b[K") || strings.Contains(errs, "Completed") || strings.Contains(out, "\r") {
		t.Errorf("terminal: exit %d, stderr %q", code, errs)
	}
}

// TestBenchProgressOnAPty runs the real binary on a pseudo-terminal (with
// script(1)): the live line shows up and is erased before the report.
func TestBenchProgressOnAPty(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("no script(1) to make a pty")
	}
	bin := buildBinary(t)
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{Delay: 2 * time.Millisecond})
	out, err := exec.Command(script, "-q", "-e", "-c", bin+" bench -k -t 0.8 "+srv.URL("/")+" 2>&1", "/dev/null").Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	s := string(out)
	if !regexp.MustCompile(`\r\x1b\[K\d+\.\d s: \d+ requests, \d+ req/s, 0 failed, ETA \ds`).MatchString(s) ||
		!regexp.MustCompile(`\r\x1b\[K(\r?\n)*Server Software:`).MatchString(s) {
		t.Errorf("pty output %q", s[:min(len(s), 600)])
	}
	if strings.Contains(s, "Completed") {
		t.Errorf("heartbeat lines on a terminal: %q", s[:min(len(s), 600)])
	}
}

package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/recorder"
)

// TestKeepAliveSpelling: -k, --keepalive and --keep-alive are the same bool
// in bench and sweep (sweep --keepalive -c 1,2 URL used to fail), sweep's
// choice is --keepalive-modes, and serve takes --keep-alive for its policy.
func TestKeepAliveSpelling(t *testing.T) {
	onceAcrossEngines(t)
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{BodyBytes: 5})
	u := srv.URL("/")
	for _, tc := range []struct {
		name string
		args []string
		ka   []bool // keep-alive of each series
	}{
		{"bench -k", []string{"bench", "-k", u}, []bool{true}},
		{"bench --keepalive", []string{"bench", "--keepalive", u}, []bool{true}},
		{"bench --keep-alive", []string{"bench", "--keep-alive", u}, []bool{true}},
		{"bench none", []string{"bench", u}, []bool{false}},
		{"sweep -k", []string{"sweep", "-k", "-c", "1,2", u}, []bool{true}},
		{"sweep --keepalive", []string{"sweep", "--keepalive", "-c", "1,2", u}, []bool{true}},
		{"sweep --keep-alive", []string{"sweep", "--keep-alive", "-c", "1,2", u}, []bool{true}},
		{"sweep none", []string{"sweep", "-c", "1,2", u}, []bool{false}},
		{"sweep modes on,off", []string{"sweep", "--keepalive-modes", "on,off", "-c", "1,2", u}, []bool{true, false}},
		{"sweep modes both", []string{"sweep", "--keepalive-modes", "both", "-c", "1,2", u}, []bool{false, true}},
		{"sweep modes off", []string{"sweep", "--keep-alive-modes", "off", "-c", "1,2", u}, []bool{false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []bool
			if tc.args[0] == "bench" {
				s := benchJSON(t, append([]string{"-n", "4"}, tc.args[1:]...)...)
				got = append(got, s.KeepAlive)
			} else {
				code, _, errs, dir := sweepOut(t, append([]string{"-q", "-n", "4", "--warmup", "0"}, tc.args[1:]...)...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errs)
				}
				sw, _ := readSweep(t, dir)
				for _, se := range sw.Series {
					got = append(got, se.KeepAlive)
				}
			}
			if len(got) != len(tc.ka) {
				t.Fatalf("keep-alive per series %v, want %v", got, tc.ka)
			}
			for i := range got {
				if got[i] != tc.ka[i] {
					t.Errorf("keep-alive per series %v, want %v", got, tc.ka)
				}
			}
		})
	}
	code, _, errs := runMain(t, context.Background(), "serve", "--listen", "tcp:127.0.0.1:0", "--keep-alive", "sometimes")
	if code != exitUsage || !strings.Contains(errs, "bad keep-alive policy") {
		t.Errorf("serve --keep-alive sometimes: exit %d, %q", code, errs)
	}
}

// TestDashIsStdout: "-" as the file of -g, -e and --raw is standard output,
// and no file named "-" appears; --cpuprofile - is refused (binary).
func TestDashIsStdout(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{BodyBytes: 5})
	t.Chdir(t.TempDir())
	for _, tc := range []struct {
		flag, want string
	}{
		{"-g", "starttime\tseconds\tctime\tdtime\tttime\twait\n"},
		{"-e", "Percentage served,Time in ms\n0,"},
		{"--raw", recorder.RawHeader},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			code, out, errs := runMain(t, context.Background(), "bench", "-q", "-n", "20", tc.flag, "-", srv.URL("/"))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if !strings.Contains(out, tc.want) || !strings.Contains(out, "Complete requests:      20\n") {
				t.Errorf("stdout lacks %q and the report:\n%.600q", tc.want, out)
			}
			if _, err := os.Stat("-"); err == nil {
				t.Errorf("%s - created a file named -", tc.flag)
				os.Remove("-")
			}
		})
	}
	code, _, errs := runMain(t, context.Background(), "bench", "-q", "--cpuprofile", "-", srv.URL("/"))
	if code != exitUsage || !strings.Contains(errs, "give a file") {
		t.Errorf("--cpuprofile -: exit %d, %q", code, errs)
	}
}

// TestCosmetics: serve --tls says https; the sweep header labels its total
// time; a run too short to measure prints "-" for the client's CPU share.
// (A regular file as serve's Unix socket: TestServeExitStatus.)
func TestCosmetics(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	for _, tc := range []struct {
		name string
		args []string
		want *regexp.Regexp
	}{
		{"serve --tls", []string{"serve", "--tls", "--listen", "tcp:127.0.0.1:0"}, regexp.MustCompile(`^listening https tcp 127\.0\.0\.1:\d+\n$`)},
		{"serve", []string{"serve", "--listen", "tcp:127.0.0.1:0"}, regexp.MustCompile(`^listening http tcp 127\.0\.0\.1:\d+\n$`)},
		{"sweep header", []string{"sweep", "-q", "-n", "2", "-c", "1", "--warmup", "0", "--out", t.TempDir(), srv.URL("/")},
			regexp.MustCompile(`(?m)^Sweep: 1 series, 1 levels, 2 requests per level, \d+\.\d s in all\n`)},
		{"short run", []string{"bench", "-q", "-n", "1", srv.URL("/")},
			regexp.MustCompile(`(?m)^Client CPU: +\d+\.\d\d s \(user \d+\.\d\d \+ sys \d+\.\d\d\), - of one core, \d+ cores?`)},
		{"measured run", []string{"bench", "-q", "-t", "0.15", srv.URL("/")},
			regexp.MustCompile(`(?m)^Client CPU: +\d+\.\d\d s \(user \d+\.\d\d \+ sys \d+\.\d\d\), \d+% of one core, \d+ cores?`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			code, out, errs := runMain(t, ctx, tc.args...)
			if code != 0 || !tc.want.MatchString(out) {
				t.Errorf("exit %d, stderr %q; stdout does not match %s:\n%s", code, errs, tc.want, out)
			}
		})
	}
}

// TestVersionHelpAndABFlags: the version from every spelling, "help
// COMMAND", and ab's -i, -u, -C, -A working, -X refused with why.
func TestVersionHelpAndABFlags(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	u := srv.URL("/headers")
	body := filepath.Join(t.TempDir(), "body")
	os.WriteFile(body, []byte("hello=world"), 0o644)
	versionRe := regexp.MustCompile(`^backbench \S+ .*` + regexp.QuoteMeta(runtime.Version()) + ` ` + runtime.GOOS + `/` + runtime.GOARCH + "\n$")
	_, benchHelp, _ := runMain(t, context.Background(), "bench", "--help")
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout *regexp.Regexp // nil: not checked
		stderr string         // with -v 2: what the request shows; otherwise the error
	}{
		{"version", []string{"version"}, 0, versionRe, ""},
		{"--version", []string{"--version"}, 0, versionRe, ""},
		{"-V", []string{"-V"}, 0, versionRe, ""},
		{"bench -V", []string{"bench", "-V"}, 0, versionRe, ""},
		{"help bench", []string{"help", "bench"}, 0, regexp.MustCompile(`^` + regexp.QuoteMeta(benchHelp) + `$`), ""},
		{"help sweep", []string{"help", "sweep"}, 0, regexp.MustCompile(`(?s)^Usage: backbench sweep .*--keepalive-modes`), ""},
		{"help nosuch", []string{"help", "nosuch"}, 2, nil, `unknown command "nosuch"`},
		{"-i", []string{"bench", "-v", "2", "-i", u}, 0, nil, "HEAD /headers HTTP/1.1"},
		{"-u", []string{"bench", "-v", "2", "-u", body, u}, 0, nil, "PUT /headers HTTP/1.1\r\nHost: 127.0.0.1"},
		{"-u length", []string{"bench", "-v", "2", "-u", body, u}, 0, nil, "Content-Length: 11"},
		{"-C", []string{"bench", "-v", "2", "-C", "a=1", "--cookie", "b=2", u}, 0, nil, "Cookie: a=1; b=2\r\n"},
		{"-A", []string{"bench", "-v", "2", "-A", "user:pass", u}, 0, nil, "Authorization: Basic dXNlcjpwYXNz\r\n"},
		{"-X", []string{"bench", "-X", "127.0.0.1:3128", u}, 2, nil, "-X 127.0.0.1:3128: backbench has no proxy mode, it talks to the backend directly"},
		{"-i and -p", []string{"bench", "-i", "-p", body, u}, 2, nil, "-i (HEAD) sends no body"},
		{"-u and -p", []string{"bench", "-u", body, "-p", body, u}, 2, nil, "-p and -u both give a body"},
		{"-i and -m", []string{"bench", "-i", "-m", "GET", u}, 2, nil, "contradict"},
		{"bad -C", []string{"bench", "-C", "nocookie", u}, 2, nil, "bad -C"},
		{"bad -A", []string{"bench", "-A", "nocolon", u}, 2, nil, "bad -A"},
		{"sweep -X", []string{"sweep", "-c", "1", "-X", "p:1", u}, 2, nil, "no proxy mode"},
		{"completion fish", []string{"completion", "fish"}, 0, regexp.MustCompile(`^# fish completion for backbench`), ""},
		{"completion tcsh", []string{"completion", "tcsh"}, 2, nil, "backbench completion: want bash, zsh or fish"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if args[0] == "bench" {
				args = append([]string{"bench", "-q", "-n", "1"}, args[1:]...)
			}
			code, out, errs := runMain(t, context.Background(), args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, errs)
			}
			if tc.stdout != nil && !tc.stdout.MatchString(out) {
				t.Errorf("stdout does not match %s:\n%s", tc.stdout, out)
			}
			if !strings.Contains(errs, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, errs)
			}
			if code == 0 && tc.stdout == nil && !strings.Contains(out, "Failed requests:        0\n") {
				t.Errorf("the request failed:\n%s", out)
			}
		})
	}
}

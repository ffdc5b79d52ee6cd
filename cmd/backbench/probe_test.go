package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/serve"
)

// TestProbeCommand runs probe end to end, in text and, with -o, in JSON
// to a file. What the checks find is tested in internal/proberun.
func TestProbeCommand(t *testing.T) {
	s := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{})
	code, out, errs := runMain(t, context.Background(), "probe", "-s", "3", "--max-requests", "20", s.URL("/x"))
	if code != 0 || !strings.Contains(out, "keep_conn                    honored") || !strings.Contains(out, "\nFor benchmarking:\n") {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	file := filepath.Join(t.TempDir(), "probe.json")
	code, out, errs = runMain(t, context.Background(), "probe", "--format", "json", "-o", file, "-s", "3", "--max-requests", "20", s.URL("/x"))
	b, err := os.ReadFile(file)
	var m map[string]any
	if code != 0 || out != "" || err != nil || json.Unmarshal(b, &m) != nil || m["kind"] != "probe" {
		t.Errorf("json -o: exit %d %s, stdout %q, file %v %s", code, errs, out, err, b)
	}
}

func TestProbeCommandErrors(t *testing.T) {
	refused := deadTCPAddr(t)
	_, refusedPort, _ := net.SplitHostPort(refused)
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no URL", []string{"probe"}, exitUsage, "want exactly one URL"},
		{"bad format", []string{"probe", "--format", "xml", "http://127.0.0.1:1/"}, exitUsage, "format"},
		{"bad timeout", []string{"probe", "-s", "0", "http://127.0.0.1:1/"}, exitUsage, "-s must be"},
		{"bad idle", []string{"probe", "--idle-max", "0", "http://127.0.0.1:1/"}, exitUsage, "--idle-max"},
		{"bad max", []string{"probe", "--max-requests", "0", "http://127.0.0.1:1/"}, exitUsage, "--max-requests"},
		{"bad URL", []string{"probe", "ftp://x/"}, exitUsage, "unknown scheme"},
		{"insecure on http", []string{"probe", "--insecure", "http://127.0.0.1:1/"}, exitUsage, "--insecure applies to https:// targets only"},
		{"range and unix socket", []string{"probe", "--unix-socket", "/tmp/x.sock", "fcgi://127.0.0.1:{1..2}/"}, exitUsage, "do not mix"},
		{"bad range", []string{"probe", "fcgi://127.0.0.1:{2..1}/"}, exitUsage, "bad range"},
		{"range refused", []string{"probe", "fcgi://127.0.0.1:{" + refusedPort + ".." + refusedPort + "}/"}, exitUnreachable, "connection refused"},
		{"param on http", []string{"probe", "--param", "A=B", "http://127.0.0.1:1/"}, exitUsage, "fcgi:// targets only"},
		{"refused", []string{"probe", "fcgi://" + refused + "/"}, exitUnreachable, "connection refused"},
		{"no socket", []string{"probe", "http://unix:/nonexistent/bb.sock:/"}, exitUnreachable, "no such Unix socket"},
		{"unknown check", []string{"probe", "--only", "nosuch", "fcgi://127.0.0.1:1/"}, exitUsage, `unknown check "nosuch"`},
		{"FastCGI check on http", []string{"probe", "--skip", "abort", "http://127.0.0.1:1/"}, exitUsage, `unknown check "abort"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runMain(t, context.Background(), tc.args...)
			if code != tc.code || !strings.Contains(errs, tc.msg) {
				t.Errorf("exit %d, stderr %q, stdout %q; want %d and %q", code, errs, out, tc.code, tc.msg)
			}
		})
	}
	code, out, _ := runMain(t, context.Background(), "probe", "--help")
	if code != 0 || !strings.Contains(out, "--idle-max") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
}

// TestServeBehaviourFlags: serve's behaviour flags set the backend's
// behaviour (what probe sees of it is tested in internal/proberun).
func TestServeBehaviourFlags(t *testing.T) {
	code, _, errs := runMain(t, context.Background(), "serve", "--fcgi-multiplex", "maybe", "--listen", "tcp:127.0.0.1:0")
	if code != exitUsage || !strings.Contains(errs, "fcgi-multiplex") {
		t.Errorf("bad word: exit %d %q", code, errs)
	}
	var o serve.Options
	fs := newServeFlags(&o)
	if err := parseFlags(fs, "", []string{"--protocol", "fcgi", "--fcgi-multiplex", "support", "--fcgi-get-values", "ignore", "--fcgi-keep-conn", "ignore"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if b := o.Behaviour; b.Multiplex != fixtures.MuxSupport || b.GetValues != fixtures.ReplyIgnore || b.KeepConn != fixtures.KeepConnIgnore {
		t.Errorf("behaviour %+v", b)
	}
}

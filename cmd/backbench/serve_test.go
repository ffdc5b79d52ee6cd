package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// What serve's backends do under load is tested in internal/serve
// (TestServeExitAfter, TestServeFault) and fixtures
// (TestFCGIGetValuesDie); here, the command line's exit statuses.

// TestServeExitStatus: bad serve command lines give one line on stderr and
// exit 2 before anything listens; a listen address that cannot be used
// gives exit 1.
func TestServeExitStatus(t *testing.T) {
	dir := t.TempDir()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	okListen := "unix:" + filepath.Join(dir, "ok.sock")
	regular := filepath.Join(dir, "regular")
	if err := os.WriteFile(regular, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no listen", []string{"serve"}, 2, "need at least one --listen"},
		{"listen without network", []string{"serve", "--listen", "127.0.0.1:9000"}, 2, "bad --listen"},
		{"listen udp", []string{"serve", "--listen", "udp:127.0.0.1:9000"}, 2, "bad --listen"},
		{"listen empty address", []string{"serve", "--listen", "tcp:"}, 2, "bad --listen"},
		{"unknown model", []string{"serve", "--listen", okListen, "--model", "forked"}, 2, "unknown model"},
		{"prefork without N", []string{"serve", "--listen", okListen, "--model", "prefork"}, 2, "prefork:N"},
		{"prefork zero", []string{"serve", "--listen", okListen, "--model", "prefork:0"}, 2, "prefork:N"},
		{"serial with N", []string{"serve", "--listen", okListen, "--model", "serial:2"}, 2, "takes no :N"},
		{"unknown fault", []string{"serve", "--listen", okListen, "--fault", "explode"}, 2, `unknown http fault "explode"`},
		{"negative backlog", []string{"serve", "--listen", okListen, "--backlog", "-1"}, 2, "--backlog -1"},
		{"no processes", []string{"serve", "--listen", okListen, "--processes", "0"}, 2, "--processes 0"},
		{"preload alone", []string{"serve", "--listen", okListen, "--preload", "4096"}, 2, "--preload needs --processes"},
		{"fault of the other protocol", []string{"serve", "--protocol", "fcgi", "--listen", okListen, "--fault", "bad-status"}, 2, `unknown fcgi fault "bad-status"`},
		{"fault every zero", []string{"serve", "--listen", okListen, "--fault", "hang", "--fault-every", "0"}, 2, "--fault-every must be at least 1"},
		{"bad keepalive", []string{"serve", "--listen", okListen, "--keepalive", "sometimes"}, 2, "bad keep-alive policy"},
		{"keepalive max zero", []string{"serve", "--listen", okListen, "--keepalive", "max=0"}, 2, "bad keep-alive policy"},
		{"bad protocol", []string{"serve", "--protocol", "ftp", "--listen", okListen}, 2, "want one of"},
		{"negative body", []string{"serve", "--listen", okListen, "--body", "-1"}, 2, "--body -1"},
		{"bad status", []string{"serve", "--listen", okListen, "--status", "42"}, 2, "--status 42"},
		{"bad delay", []string{"serve", "--listen", okListen, "--delay", "soon"}, 2, "want seconds"},
		{"unexpected argument", []string{"serve", "--listen", okListen, "extra"}, 2, "unexpected argument"},
		{"unknown flag", []string{"serve", "--frob"}, 2, "unknown flag"},
		{"negative exit-after", []string{"serve", "--listen", okListen, "--exit-after", "-1"}, 2, "--exit-after"},
		{"address in use", []string{"serve", "--listen", "tcp:" + busy.Addr().String()}, 1, "address already in use"},
		{"listen on a regular file", []string{"serve", "--listen", "unix:" + regular}, 1, "is not a socket (left alone)"},
		{"socket directory missing", []string{"serve", "--listen", "unix:" + filepath.Join(dir, "no", "such", "s.sock")}, 1, "no such file or directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A valid line would serve until ctx ends: bound it.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			code, out, errs := runMain(t, ctx, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, c.code, errs)
			}
			if !strings.Contains(errs, c.msg) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
				t.Errorf("stderr %q, want one line with %q", errs, c.msg)
			}
			if strings.Contains(out, "listening") {
				t.Errorf("it listened: %q", out)
			}
			if strings.Contains(errs, "goroutine") || strings.Contains(errs, "panic") {
				t.Errorf("stack trace: %s", errs)
			}
			if strings.Count(errs, "listen ") > 1 {
				t.Errorf("stderr says listen twice: %q", errs)
			}
		})
	}
	if b, err := os.ReadFile(regular); err != nil || string(b) != "data" {
		t.Errorf("serve touched the regular file: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ok.sock")); err == nil {
		t.Error("a bad command line left a listening socket behind")
	}
}

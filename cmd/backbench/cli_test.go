package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/fixtures"
)

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

// TestServeFault: serve takes a valid fault and applies it.
func TestServeFault(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, nil, []string{"serve", "--listen", "unix:" + sock, "--fault", fixtures.FaultBadStatus, "--fault-every", "2"}, &out, &errb)
	}()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exit %d: %s", code, errb.String())
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if fi, err := os.Stat(sock); err == nil && fi.Mode().Type() == os.ModeSocket {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("serve did not listen")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s := benchJSON(t, "-n", "10", "-k", "http://unix:"+sock+":/")
	if s.Complete != 5 || s.Failures.Protocol != 5 || s.Failed != 5 {
		t.Errorf("complete %d, failures %+v: want 5 and 5 protocol", s.Complete, s.Failures)
	}
}

// TestCommandHelp: backbench --help names every command, each command's
// --help exits 0 on stdout, and bench's and serve's list every flag (serve's
// also every fault).
func TestCommandHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, out, errs := runMain(t, context.Background(), args...)
		if code != 0 || errs != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errs)
		}
		cmds := regexp.MustCompile(`(?m)^  backbench (\w+) `).FindAllStringSubmatch(out, -1)
		if len(cmds) < 2 {
			t.Fatalf("%v: no commands listed:\n%s", args, out)
		}
		for _, m := range cmds {
			code, help, errs := runMain(t, context.Background(), m[1], "--help")
			if code != 0 || errs != "" || !strings.HasPrefix(help, "Usage: backbench "+m[1]) || !strings.Contains(help, "--") {
				t.Errorf("%s --help: exit %d, stderr %q, stdout:\n%s", m[1], code, errs, help)
			}
		}
	}
	var o benchOptions
	var want []string
	newBenchFlags(&o).VisitAll(func(f *pflag.Flag) { want = append(want, f.Name) })
	if len(want) < 20 {
		t.Fatalf("bench has %d flags?", len(want))
	}
	_, out, _ := runMain(t, context.Background(), "bench", "--help")
	for _, name := range want {
		if !helpHasFlag(out, name) {
			t.Errorf("bench --help lacks --%s", name)
		}
	}
	_, out, _ = runMain(t, context.Background(), "serve", "--help")
	for _, name := range []string{"protocol", "listen", "model", "delay", "work", "body", "status", "keepalive", "fault", "fault-every"} {
		if !helpHasFlag(out, name) {
			t.Errorf("serve --help lacks --%s", name)
		}
	}
	for _, proto := range []string{fixtures.ProtoFCGI, fixtures.ProtoHTTP} {
		for _, f := range fixtures.Faults(proto) {
			if !strings.Contains(out, "  "+f.Name+" ") {
				t.Errorf("serve --help lacks the fault %s", f.Name)
			}
		}
	}
}

// helpHasFlag reports whether help lists the flag --name (followed by its
// type, its optional value or a blank).
func helpHasFlag(help, name string) bool {
	return regexp.MustCompile(`--` + regexp.QuoteMeta(name) + `[ =\[]`).MatchString(help)
}

// TestBenchPermissionDenied: a Unix socket the user may not reach is one
// line and exit 1. Run as root, the built binary drops to nobody.
func TestBenchPermissionDenied(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	sockDir := filepath.Dir(srv.Addr)
	bin := buildBinary(t)
	cmd := exec.Command(bin, "bench", "-q", srv.URL("/"))
	if os.Getuid() == 0 {
		// The binary's directories must let nobody in; the socket's
		// (0700, root's) must not.
		for d := filepath.Dir(bin); d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
			os.Chmod(d, 0o755)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	} else {
		os.Chmod(sockDir, 0)
		defer os.Chmod(sockDir, 0o700)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != exitUnreachable || !strings.Contains(errb.String(), "permission denied") || strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 {
		t.Errorf("exit %d, stderr %q: want 1 and one line with permission denied", code, errb.String())
	}
	if srv.Accepted() != 0 {
		t.Errorf("%d connections reached the server", srv.Accepted())
	}
}

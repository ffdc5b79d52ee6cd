package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/fixtures"
)

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

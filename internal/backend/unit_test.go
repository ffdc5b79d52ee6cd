package backend

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func fmtSscan(s string, a ...any) (int, error) { return fmt.Sscan(s, a...) }

func TestParseHexAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0100007F:1F90":                         "127.0.0.1:8080",
		"00000000:0050":                         "0.0.0.0:80",
		"00000000000000000000000001000000:0016": "[::1]:22",
	} {
		ip, port, ok := parseHexAddr(in)
		if got := net.JoinHostPort(ip.String(), fmt.Sprint(port)); !ok || got != want {
			t.Errorf("%s: %s, %v; want %s", in, got, ok, want)
		}
	}
	if _, _, ok := parseHexAddr("zz:1"); ok {
		t.Error("bad address accepted")
	}
}

func TestRingTail(t *testing.T) {
	var r ring
	r.Write([]byte("one\r\n\ntwo\n   \nthree"))
	if got := r.tail(5); !slices.Equal(got, []string{"one", "two", "three"}) {
		t.Errorf("%q", got)
	}
	if got := r.tail(2); !slices.Equal(got, []string{"two", "three"}) {
		t.Errorf("%q", got)
	}
	r.Write([]byte(strings.Repeat("x", outputCap-3) + "\nlast\n"))
	if got := r.tail(5); !slices.Equal(got, []string{"last"}) {
		t.Errorf("after wrap: %q", got)
	}
	var big ring
	big.Write([]byte(strings.Repeat("y", 2*outputCap) + "\nend\n"))
	if got := big.tail(5); !slices.Equal(got, []string{"end"}) {
		t.Errorf("big write: %q", got)
	}
	if got := big.tail(0); got != nil {
		t.Errorf("tail(0): %q", got)
	}
}

func TestSafeName(t *testing.T) {
	if got := safeName("plain-1.x_y"); got != "plain-1.x_y" {
		t.Errorf("%q", got)
	}
	a, b := safeName("w=4"), safeName("w:4")
	if a == b || !strings.HasPrefix(a, "w-4-") {
		t.Errorf("%q %q", a, b)
	}
	if got := safeName(strings.Repeat("z", 100)); len(got) > maxSockName {
		t.Errorf("%q", got)
	}
	if got := safeName("///"); !strings.HasPrefix(got, "backend-") {
		t.Errorf("%q", got)
	}
}

func TestStopReportString(t *testing.T) {
	for _, c := range []struct {
		r    StopReport
		want string
	}{
		{StopReport{Signal: syscall.SIGTERM, Elapsed: 120 * time.Millisecond}, "stopped by SIGTERM in 120ms"},
		{StopReport{Signal: syscall.SIGQUIT, Killed: true, Elapsed: 5200 * time.Millisecond}, "did not stop on SIGQUIT within the grace period: killed (5.2s)"},
		{StopReport{Killed: true, Elapsed: time.Second, Left: []int{12, 13}}, "did not stop on SIGTERM within the grace period: killed (1s); STILL RUNNING after SIGKILL: pids 12 13"},
	} {
		if got := c.r.String(); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}

func TestShellCause(t *testing.T) {
	empty := "an empty command: a variable or $(...) expanded to nothing (is the program on PATH?)"
	for _, c := range []struct {
		code int
		line string
		want string
	}{
		{126, "sh: 1: exec: : Permission denied", empty},
		{127, "bash: exec: : not found", empty},
		{127, "sh: 1: php-fpm: not found", "command not found: php-fpm (not on PATH)"},
		{127, "bash: line 1: php-fpm: command not found", "command not found: php-fpm (not on PATH)"},
		{127, "sh: 1: exec: /usr/sbin/php-fpm8.1: not found", "command not found: /usr/sbin/php-fpm8.1 (no such file)"},
		{127, "bash: /nope/x: No such file or directory", "command not found: /nope/x (no such file)"},
		{126, "sh: 1: exec: /etc/passwd: Permission denied", "cannot run /etc/passwd: permission denied (not an executable file)"},
		{1, "sh: 1: php-fpm: not found", ""},
		{127, "something else", ""},
	} {
		if got := ShellCause(c.code, []string{"earlier", c.line}); got != c.want {
			t.Errorf("%d %q: %q, want %q", c.code, c.line, got, c.want)
		}
	}
}

// TestShellCauseReal runs sh with commands it cannot run and reads the
// cause from its own words.
func TestShellCauseReal(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{`exec "$(command -v backbench-no-such-program)"`, "an empty command"},
		{`exec backbench-no-such-program`, "command not found: backbench-no-such-program (not on PATH)"},
		{`exec /nonexistent/backbench-x`, "command not found: /nonexistent/backbench-x (no such file)"},
	} {
		spec := Spec{Name: "sh", Argv: []string{"sh", "-c", c.script}, Network: "unix", Addr: filepath.Join(t.TempDir(), "s.sock")}
		_, err := Start(context.Background(), spec)
		var se *StartError
		if !errors.As(err, &se) || se.Kind != KindExited || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.script, err, c.want)
		}
	}
}

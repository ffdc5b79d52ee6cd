package realbackend

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"github.com/backbench/backbench/internal/procstat"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Bodies and delays of the apps that scripts/backends.sh writes for every
// backend it starts.
const (
	// ScriptedSmallLen is the length in bytes of the small endpoint's
	// body, "hello, world\n".
	ScriptedSmallLen = 13
	// ScriptedBigLen is the length in bytes of the big endpoint's body,
	// "x" × 10239 and "\n".
	ScriptedBigLen = 10240
	// ScriptedSlowMs is the slow endpoint's sleep, in milliseconds.
	ScriptedSlowMs = 20
)

// Scripted is a backend started by scripts/backends.sh start (php-fpm,
// fcgiwrap, Thin, Ruby's fcgi.rb, Puma, gunicorn, nginx ...), on TCP and
// on a Unix socket.
type Scripted struct {
	// Name is the backend's name in backends.sh.
	Name string
	// Dir is its state directory (sockets, configuration, logs).
	Dir string
	// URLs are the app's roots by kind: "tcp", "unix" (and "fcgi-unix",
	// the pool behind nginx).
	URLs map[string]string
	// Paths are the endpoints: "small", "big", "slow".
	Paths map[string]string
	// DocRoot is the FastCGI document root of the app's scripts.
	DocRoot string
	// PIDs are the processes backends.sh started.
	PIDs []int
}

// URL returns the target of endpoint on the kind of listener.
func (b *Scripted) URL(kind, endpoint string) string {
	return strings.TrimSuffix(b.URLs[kind], "/") + b.Paths[endpoint]
}

// scriptPath is the absolute path of scripts/backends.sh, found in the
// module's root above the test's working directory.
func scriptPath(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "scripts", "backends.sh")
		}
		up := filepath.Dir(dir)
		if up == dir {
			tb.Fatal("realbackend: no go.mod above the working directory")
		}
		dir = up
	}
}

// StartScripted starts backend name with scripts/backends.sh on TCP and a
// Unix socket, and stops it when the test ends, checking that every
// process it started is gone. A backend that is not installed skips the
// test (Skip), or, when required, goes through Missing (fails under
// CI=true).
func StartScripted(tb testing.TB, name string, required bool) *Scripted {
	tb.Helper()
	script := scriptPath(tb)
	if _, err := exec.LookPath("bash"); err != nil {
		tb.Skip("no bash")
	}
	// Not tb.TempDir: Unix socket paths must stay under 108 bytes.
	dir, err := os.MkdirTemp("", "bbr")
	if err != nil {
		tb.Fatal(err)
	}
	b := &Scripted{Name: name, Dir: dir, URLs: map[string]string{}, Paths: map[string]string{}}
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
			Missing(tb, msg)
		}
		Skip(tb, msg)
	case err != nil:
		tb.Fatalf("backends.sh start %s: %v\n%s", name, err, errb.String())
	}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 3 && f[0] == "url":
			b.URLs[f[1]] = f[2]
		case len(f) == 3 && f[0] == "path":
			b.Paths[f[1]] = f[2]
		case len(f) == 2 && f[0] == "docroot":
			b.DocRoot = f[1]
		case len(f) == 2 && f[0] == "pid":
			pid, err := strconv.Atoi(f[1])
			if err != nil {
				tb.Fatalf("backends.sh: bad line %q", sc.Text())
			}
			b.PIDs = append(b.PIDs, pid)
		case len(f) == 2 && f[0] == "name":
		default:
			tb.Fatalf("backends.sh: unexpected line %q", sc.Text())
		}
	}
	if b.URLs["tcp"] == "" || b.URLs["unix"] == "" || len(b.PIDs) == 0 || len(b.Paths) != 3 {
		tb.Fatalf("backends.sh start %s printed:\n%s", name, out.String())
	}
	return b
}

// stop runs backends.sh stop and checks that every process it started is
// gone (a zombie left to an init that does not reap counts as gone).
func (b *Scripted) stop(tb testing.TB, script string) {
	defer os.RemoveAll(b.Dir)
	if len(b.PIDs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "bash", script, "stop", b.Dir).CombinedOutput(); err != nil {
		tb.Errorf("backends.sh stop %s: %v\n%s", b.Dir, err, out)
	}
	for _, pid := range b.PIDs {
		if Alive(pid) {
			tb.Errorf("%s: process %d still runs after backends.sh stop", b.Name, pid)
		}
	}
}

// Alive reports whether process pid runs and is not a zombie.
func Alive(pid int) bool {
	p, err := procstat.ReadStat(pid)
	return err == nil && p.Alive()
}

package main

import (
	"bufio"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// startDelayServe starts the built-in HTTP backend of bin answering after
// delay on a Unix socket in dir, and returns its URL; the test's end
// stops it (by its PID).
func startDelayServe(t *testing.T, bin, dir, name, delay string) string {
	t.Helper()
	sock := filepath.Join(dir, name+".sock")
	cmd := exec.Command(bin, "serve", "--protocol", "http", "--delay", delay, "--listen", "unix:"+sock)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.HasPrefix(line, "listening ") {
		t.Fatalf("serve: %q, %v", line, err)
	}
	return name + "=http://unix:" + sock + ":/"
}

// TestSweepUntilErrors: --until decided and its flags, given where they
// cannot apply, are usage errors (exit 2) said before any connection.
// The flags' own rules are here (a flag given without the one it needs,
// --until decided without a pair to decide); the words of the trials'
// options are internal/trials' TestUntilOptionsWords, of which one shows
// that they exit with status 2 too. (The rounds until decided:
// internal/sweep's TestLiveSweepUntilDecided.)
func TestSweepUntilErrors(t *testing.T) {
	dir := t.TempDir()
	u1, u2 := "a=http://unix:"+filepath.Join(dir, "a.sock")+":/", "b=http://unix:"+filepath.Join(dir, "b.sock")+":/"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--budget", "1m", u1, u2}, "--budget needs --until decided"},
		{[]string{"--max-repeat", "9", u1, u2}, "--max-repeat needs --precision P or --until decided"},
		{[]string{"--until", "decided", u1}, "--until decided decides pairs of series"},
		{[]string{"--until", "decided", "--repeat", "2", u1, u2}, "want at least 4 first rounds"},
	} {
		code, _, errs := runMain(t, context.Background(), append([]string{"sweep", "-q", "-c", "1", "-n", "5", "--out", filepath.Join(dir, "out")}, c.args...)...)
		if code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("sweep %v: exit %d, %s: want exit 2 and %q", c.args, code, errs, c.want)
		}
	}
	if code, _, errs := runMain(t, context.Background(), "bench", "--until", "decided", "-n", "5", u1); code != exitUsage {
		t.Errorf("bench --until: exit %d, %s: want 2", code, errs)
	}
}

package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

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

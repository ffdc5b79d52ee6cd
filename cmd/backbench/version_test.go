package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMakeBuildStampsCommit: make build, with GOFLAGS=-buildvcs=false (no
// VCS settings in the build info), makes a binary whose version line names
// the checkout's commit.
func TestMakeBuildStampsCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if os.Getenv("BACKBENCH_ENGINE") != "" {
		// make test's second pass (BACKBENCH_ENGINE=poller) repeats the
		// load tests on another engine; the build needs no second run.
		t.Skip("run once, in the first pass of make test")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not a git checkout")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "backbench")
	cmd := exec.Command("make", "-s", "-C", root, "build", "BIN="+bin, "GO="+goBin)
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	commit := strings.TrimSpace(string(head))[:12]
	if !regexp.MustCompile(`^backbench \S+ commit ` + commit + `(\+modified)? \d{4}-\d\d-\d\dT`).Match(out) {
		t.Errorf("version %q does not name the commit %s", out, commit)
	}
}

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
	cmd, bin := makeCmd(t, "build", "builds the binary")
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not a git checkout")
	}
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

// makeCmd returns the command "make -s target" in the repository's root,
// building the binary bin in a temporary folder with the go command of
// this test, or skips the test (with why as the -short reason) under
// -short, in make test's second pass, or without make.
func makeCmd(t *testing.T, target, why string) (cmd *exec.Cmd, bin string) {
	t.Helper()
	if testing.Short() {
		t.Skip(why)
	}
	if os.Getenv("BACKBENCH_ENGINE") != "" {
		// make test's second pass (BACKBENCH_ENGINE=poller) repeats the
		// load tests on another engine; make needs no second run.
		t.Skip("run once, in the first pass of make test")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	bin = filepath.Join(t.TempDir(), "backbench")
	return exec.Command("make", "-s", "-C", root, target, "BIN="+bin, "GO="+goBin), bin
}

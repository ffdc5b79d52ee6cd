package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLinksNoTesting checks that the shipped binary does not link
// package testing (nor anything under testing/), both by the import graph
// of the command and by the symbols of the built binary: the test helpers
// of fixtures take an interface of their own, not testing.TB.
func TestBinaryLinksNoTesting(t *testing.T) {
	onceAcrossEngines(t)
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "testing" || strings.HasPrefix(p, "testing/") || strings.HasSuffix(p, "/internal/realbackend") {
			t.Errorf("the binary imports %s", p)
		}
	}
	bin := buildBinary(t)
	syms, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	n := 0
	for _, line := range strings.Split(string(syms), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && strings.HasPrefix(f[len(f)-1], "testing.") {
			n++
			if n <= 5 {
				t.Errorf("the binary has the symbol %s", f[len(f)-1])
			}
		}
	}
	if n == 0 && !strings.Contains(string(syms), "main.main") {
		t.Fatalf("go tool nm listed no main.main: the symbol check saw nothing")
	}
}

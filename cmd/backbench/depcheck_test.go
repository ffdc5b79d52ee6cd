package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDepcheckReadsTheDocsTable checks that scripts/depcheck.sh enforces
// the table that docs/architecture.md draws, and only it: the page as it
// is passes; the same page with one edge taken away fails on that edge, and
// with one package's row taken away fails on that package.
func TestDepcheckReadsTheDocsTable(t *testing.T) {
	onceAcrossEngines(t)
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	root := filepath.Join("..", "..")
	page, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(doc string) (string, bool) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "architecture.md")
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("bash", "scripts/depcheck.sh")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "DEPCHECK_DOC="+path)
		out, err := cmd.CombinedOutput()
		return string(out), err == nil
	}
	if out, ok := run(string(page)); !ok {
		t.Fatalf("depcheck fails on docs/architecture.md as it is:\n%s", out)
	}
	const statsRow = "| `internal/stats` | `internal/load`, `internal/trials` |"
	if !strings.Contains(string(page), statsRow) {
		t.Fatalf("docs/architecture.md has no row %q", statsRow)
	}
	noEdge := strings.Replace(string(page), statsRow, "| `internal/stats` | `internal/trials` |", 1)
	if out, ok := run(noEdge); ok || !strings.Contains(out, "internal/stats must not import internal/load") {
		t.Errorf("with internal/stats allowed internal/trials only, depcheck passed or named another edge:\n%s", out)
	}
	noRow := strings.Replace(string(page), statsRow+"\n", "", 1)
	if out, ok := run(noRow); ok || !strings.Contains(out, "internal/stats has no row") {
		t.Errorf("with internal/stats' row gone, depcheck passed or named another package:\n%s", out)
	}
}

package studyrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/study"
)

// TestWhy: a failure's line quotes the output, then the logs its files,
// command and directory name (not their lines quoted already), and names
// the directory kept.
func TestWhy(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(t.TempDir(), "other.log")
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "fpm.log"), "one\ntwo\n\nthree\nfour\nfive\nsix\nfatal: x\n")
	write(filepath.Join(dir, "logs", "default.log"), "by default\n")
	write(filepath.Join(dir, "a", "b", "deep.log"), "too deep\n")
	write(filepath.Join(dir, "empty.log"), "")
	write(other, "fatal: x\n")
	c := &config{dir: dir, res: &study.Configuration{Name: "w=1"},
		argv:  []string{"app", "--log=" + other},
		files: []written{{filepath.Join(dir, "app.conf"), "error_log = " + filepath.Join(dir, "fpm.log") + "\nmissing = gone.log\n"}}}
	got := (&runner{}).why(c, `backend "w=1" exited at start (status 78)`, []string{"  fatal: x  ", strings.Repeat("é", 200)})
	want := `backend "w=1" exited at start (status 78): fatal: x | ` + strings.Repeat("é", 120) + `…` +
		`; ` + other + ` ends as the output does` +
		`; fpm.log ends: three | four | five | six` +
		`; logs/default.log ends: by default` +
		`; its files and logs are kept in ` + dir
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if c.res.Dir != dir {
		t.Errorf("dir %q", c.res.Dir)
	}
}

package studyfile

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// wantLine reads a bad file's expectation: its first line, "# want:
// LINE:COL: MESSAGE", where MESSAGE is the start of the error's message.
var wantLine = regexp.MustCompile(`^# want: (\d+):(\d+): (.+)$`)

// badFiles returns the files of testdata/bad.
func badFiles(t testing.TB) []string {
	files, err := filepath.Glob(filepath.Join("testdata", "bad", "*.yaml"))
	if err != nil || len(files) < 20 {
		t.Fatalf("testdata/bad: %d files, %v", len(files), err)
	}
	return files
}

// TestBadFiles checks that each bad study file fails with the one-line
// error its first line expects, at its line and column.
func TestBadFiles(t *testing.T) {
	for _, path := range badFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(data), "\n")
			m := wantLine.FindStringSubmatch(first)
			if m == nil {
				t.Fatalf("the first line %q is not '# want: LINE:COL: MESSAGE'", first)
			}
			line, _ := strconv.Atoi(m[1])
			col, _ := strconv.Atoi(m[2])
			s, err := Parse(path, data)
			if err == nil {
				t.Fatalf("parsed (%d backends); want %s:%s: %s", len(s.Backends), m[1], m[2], m[3])
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v, want *Error", err, err)
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Errorf("error of more than one line: %q", err)
			}
			if e.File != path || e.Line != line || e.Col != col || !strings.HasPrefix(e.Msg, m[3]) {
				t.Errorf("error\n  %v\nwant\n  %s:%d:%d: %s...", err, path, line, col, m[3])
			}
		})
	}
}

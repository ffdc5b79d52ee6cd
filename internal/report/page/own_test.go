package page

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/document"
)

// TestReadFile: a result file is read with its modification time; a file
// that is not there is an error naming it.
func TestReadFile(t *testing.T) {
	r, err := ReadFile(filepath.Join("testdata", "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind() != KindSweep || r.ModTime.IsZero() {
		t.Errorf("kind %q, mod time %v: want a sweep with its time", r.Kind(), r.ModTime)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "none.json")); err == nil || !strings.Contains(err.Error(), "none.json") {
		t.Errorf("missing file: %v, want an error naming it", err)
	}
}

// TestWriteOwn: a command's own page is the page of its result read back,
// under the command's title.
func TestWriteOwn(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := document.Read("sweep.json", data)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteOwn(&b, d, "out/sweep.json", "sweep", false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<title>backbench sweep", "out/sweep.json"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

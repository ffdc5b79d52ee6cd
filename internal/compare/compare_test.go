package compare

import (
	"strings"
	"testing"
)

// load reads a schema-1 file of internal/document's testdata (bench and
// sweep results made by backbench).
func load(t *testing.T, name string) *File {
	t.Helper()
	f, err := Load("../document/testdata/schema1/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFilesTrials: two bench results of trials pair on their one series
// and level, every metric with a verdict, the files named in the
// comparison document; nothing differs between them.
func TestFilesTrials(t *testing.T) {
	a, b := load(t, "bench-repeat.json"), load(t, "bench-repeat-b.json")
	res, err := Files([]*File{a, b}, 0.02, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 2 || res.Files[0] != a.Path || len(res.Differences) != 0 {
		t.Errorf("files %q, differences %q", res.Files, res.Differences)
	}
	if len(res.Comparisons) == 0 {
		t.Fatal("no comparison")
	}
	for _, c := range res.Comparisons {
		if c.Verdict == "" || c.File != b.Path || c.BaselineFile != a.Path {
			t.Errorf("%+v: want a verdict, %s against %s", c, b.Path, a.Path)
		}
	}
}

// TestFilesNoTrials: results of one run a level compare, with a note
// that there is no verdict without trials.
func TestFilesNoTrials(t *testing.T) {
	res, err := Files([]*File{load(t, "bench.json"), load(t, "bench-b.json")}, 0.02, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "has no trials (one run per level)") {
		t.Errorf("notes %q: want the note of no trials", res.Notes)
	}
}

// TestFilesDiffer: a bench result against a sweep says so; a sweep's
// series pair with the bench result's one series at its level.
func TestFilesDiffer(t *testing.T) {
	res, err := Files([]*File{load(t, "bench.json"), load(t, "sweep.json")}, 0.02, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Differences, "\n"), "one is a bench result, the other a sweep") {
		t.Errorf("differences %q", res.Differences)
	}
}

// TestReadRefuses: what is not a saved result compare takes is an error
// naming the file.
func TestReadRefuses(t *testing.T) {
	for _, b := range []string{`[]`, `{"levels": [1], "series": []}`, `{"kind": "probe"}`} {
		if _, err := Read("x.json", []byte(b)); err == nil || !strings.Contains(err.Error(), "x.json") {
			t.Errorf("%s: %v, want an error naming x.json", b, err)
		}
	}
}

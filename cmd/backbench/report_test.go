package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportBadInput: a file that is not a backbench result, of a newer
// schema, or missing is one line on stderr and exit status 2.
func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notJSON := write("notes.txt", "hello\n")
	other := write("package.json", `{"name": "x", "version": "1.0.0"}`)
	newer := write("newer.json", `{"schema": 2, "levels": [1], "series": []}`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{notJSON}, "notes.txt: not a backbench result"},
		{[]string{other}, "package.json: not a backbench result"},
		{[]string{newer}, "newer.json: a result of a newer backbench: schema 2 is newer than this backbench reads (1)"},
		{[]string{filepath.Join(dir, "none.json")}, "none.json: no such file"},
		{nil, "want at least one RESULT.json"},
	} {
		code, out, errs := runMain(t, context.Background(), append([]string{"report", "-o", filepath.Join(dir, "r.html")}, tc.args...)...)
		if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q (want 2 and one line with %q)", tc.args, code, out, errs, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "r.html")); err == nil {
		t.Error("a page was written for bad input")
	}
}

// TestReportWrites: report -o PAGE writes the page and says so.
func TestReportWrites(t *testing.T) {
	page := filepath.Join(t.TempDir(), "r.html")
	code, out, errs := runMain(t, context.Background(), "report", "-o", page, filepath.Join("..", "..", "internal", "report", "page", "testdata", "bench.json"))
	if b, err := os.ReadFile(page); code != 0 || out != "Wrote "+page+"\n" || err != nil || !strings.Contains(string(b), "<section class=\"result bench\"") {
		t.Errorf("report -o: exit %d, stdout %q, stderr %q, page %v", code, out, errs, err)
	}
}

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/report"
)

// TestGnuplotAndCSVAsAb runs ab (apache2-utils) and bench with -g and -e
// against the same target, one after the other, and compares the files byte
// for byte once the timing columns are masked: the gnuplot date keeps its
// shape (letters and digits masked, blanks kept, so "Dec  1" and "Dec 01"
// differ), the millisecond columns become N.
func TestGnuplotAndCSVAsAb(t *testing.T) {
	ab, err := exec.LookPath("ab")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("ab is not installed (apt-get install apache2-utils)")
		}
		t.Skip("ab is not installed")
	}
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{BodyBytes: 100})
	dir := t.TempDir()
	files := func(who string) (g, e string) {
		return filepath.Join(dir, who+".tsv"), filepath.Join(dir, who+".csv")
	}
	args := []string{"-q", "-n", "60", "-c", "3"}
	ag, ae := files("ab")
	if out, err := exec.Command(ab, append(args, "-g", ag, "-e", ae, srv.URL("/"))...).CombinedOutput(); err != nil {
		t.Fatalf("ab: %v\n%s", err, out)
	}
	bg, be := files("bb")
	if code, _, errs := runMain(t, context.Background(), append([]string{"bench"}, append(args, "-g", bg, "-e", be, srv.URL("/"))...)...); code != 0 {
		t.Fatalf("bench: exit %d: %s", code, errs)
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	digit, letter, ms := regexp.MustCompile(`[0-9]`), regexp.MustCompile(`[A-Za-z]`), regexp.MustCompile(`^[0-9]+(\.[0-9]{3})?$`)
	mask := func(file string, timing func(col int) bool, sep string) string {
		lines := strings.SplitAfter(file, "\n")
		for i, l := range lines[1:] { // the header is compared as it is
			if l == "" {
				continue
			}
			cols := strings.Split(strings.TrimSuffix(l, "\n"), sep)
			for c, v := range cols {
				switch {
				case !timing(c):
				case c == 0 && sep == "\t": // the date
					if _, err := time.ParseInLocation(report.ABDateLayout, v, time.Local); err != nil {
						t.Errorf("date %q: %v", v, err)
					}
					cols[c] = letter.ReplaceAllString(digit.ReplaceAllString(v, "9"), "a")
				case ms.MatchString(v):
					cols[c] = "N" + strings.TrimLeft(digit.ReplaceAllString(v, "9"), "9")
				}
			}
			lines[i+1] = strings.Join(cols, sep)
			if strings.HasSuffix(l, "\n") {
				lines[i+1] += "\n"
			}
		}
		return strings.Join(lines, "")
	}
	allGnuplot := func(int) bool { return true }
	csvTimes := func(c int) bool { return c == 1 }
	for _, f := range []struct {
		name       string
		ab, bb     string
		timing     func(int) bool
		sep        string
		wantLines  int
		headerWant string
	}{
		{"gnuplot", read(ag), read(bg), allGnuplot, "\t", 61, "starttime\tseconds\tctime\tdtime\tttime\twait\n"},
		{"csv", read(ae), read(be), csvTimes, ",", 102, "Percentage served,Time in ms\n"},
	} {
		a, b := mask(f.ab, f.timing, f.sep), mask(f.bb, f.timing, f.sep)
		if a != b {
			t.Errorf("%s: backbench's file differs from ab's beyond the timing columns\nab:\n%.400s\nbackbench:\n%.400s", f.name, a, b)
		}
		if n := strings.Count(f.bb, "\n"); n != f.wantLines || !strings.HasPrefix(f.bb, f.headerWant) {
			t.Errorf("%s: %d lines:\n%.300s", f.name, n, f.bb)
		}
	}
}

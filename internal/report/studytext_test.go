package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/study"
)

// savedStudy reads testdata/study/name, a study.json that backbench study
// wrote, through document.Read, as compare and report read it.
func savedStudy(t *testing.T, name string) *study.Result {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "study", name))
	if err != nil {
		t.Fatal(err)
	}
	d, err := document.Read(name, b)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := d.(*document.Study)
	if !ok {
		t.Fatalf("%s is a %T, not a study", name, d)
	}
	return s.Result
}

// widestLine is the widest line of text, in runes, and that line.
func widestLine(text string) (int, string) {
	n, at := 0, ""
	for _, l := range strings.Split(text, "\n") {
		if k := utf8.RuneCountInString(l); k > n {
			n, at = k, l
		}
	}
	return n, at
}

// TestStudyTextFits: the text of a saved 3-factor study (a sweep of 8 series)
// and of a sizing study fits 100 columns, every answer, detail, note and
// figure still there; with no width (--wide) every line is whole, as
// wide as before. Golden files pin both widths.
func TestStudyTextFits(t *testing.T) {
	for _, c := range []struct{ file, name string }{
		{"three-factor.json", "three-factor"},
		{"sizing.json", "sizing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := savedStudy(t, c.file)
			var fit, wide bytes.Buffer
			if err := StudyText(&fit, res, 100); err != nil {
				t.Fatal(err)
			}
			if err := StudyText(&wide, res, 0); err != nil {
				t.Fatal(err)
			}
			if n, l := widestLine(fit.String()); n > 100 {
				t.Errorf("a line of %d columns: %q", n, l)
			}
			if n, _ := widestLine(wide.String()); n <= 100 {
				t.Errorf("the wide text is %d columns wide: the test's study should not fit 100", n)
			}
			// Nothing lost: the same words, in the same order.
			if a, b := strings.Fields(fit.String()), strings.Fields(wide.String()); strings.Join(a, " ") != strings.Join(b, " ") {
				// The narrow tables repeat no label on every row: compare
				// the answers and notes, which only wrap.
				at := func(s string) string { return s[strings.Index(s, "\nNotes:"):] }
				if strings.Join(strings.Fields(at(fit.String())), " ") != strings.Join(strings.Fields(at(wide.String())), " ") {
					t.Errorf("the fitted notes and answers differ from the wide ones")
				}
			}
			for _, a := range res.Answers {
				for _, d := range append([]string{a.Conclusion}, a.Details...) {
					if !strings.Contains(wide.String(), d) {
						t.Errorf("wide text lacks %q", d)
					}
					if !strings.Contains(strings.Join(strings.Fields(fit.String()), " "), strings.Join(strings.Fields(d), " ")) {
						t.Errorf("fitted text lacks %q", d)
					}
				}
			}
			golden(t, "study/"+c.name+".fit.golden", fit.Bytes())
			golden(t, "study/"+c.name+".wide.golden", wide.Bytes())
		})
	}
}

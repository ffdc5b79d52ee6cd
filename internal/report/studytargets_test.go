package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/study"
)

// withTargets gives every step of res a mix of n targets: target k sends
// k+1 requests a trial (the last, with a long label, the most), its p50
// k+1 ms and its p99 ten times that.
func withTargets(res *study.Result, n int) {
	for si := range res.Series {
		for i := range res.Series[si].Steps {
			st := &res.Series[si].Steps[i]
			st.Targets = nil
			for k := range n {
				name := fmt.Sprintf("GET /p%d.php", k)
				if k == n-1 {
					name = "POST /checkout.php?cart=a-very-long-cart-id-0123456789"
				}
				st.Targets = append(st.Targets, study.TargetStep{Target: name, Weight: 1, Requests: int64(k + 1), BodyBytes: 10,
					P50Ms: study.Figure{Median: float64(k + 1)}, P99Ms: study.Figure{Median: float64(10 * (k + 1)), CI95: []float64{1, 99}}})
			}
		}
	}
}

// TestStudyTextTargets: a study of a mix follows its series table with every
// series' targets at every level (requests, failed, the medians of p50
// and p99), within 100 columns (grouped by series when the labels make it
// wider), as wide as it is with no width; a series of more than 10
// targets shows the 10 with the most requests, and the heading says so.
// A study of one request has no such table (TestStudyTextFits's golden files).
func TestStudyTextTargets(t *testing.T) {
	res := savedStudy(t, "three-factor.json")
	withTargets(res, 3)
	var fit, wide bytes.Buffer
	if err := StudyText(&fit, res, 100); err != nil {
		t.Fatal(err)
	}
	if err := StudyText(&wide, res, 0); err != nil {
		t.Fatal(err)
	}
	golden(t, "study/targets.fit.golden", fit.Bytes())
	if n, l := widestLine(fit.String()); n > 100 {
		t.Errorf("a line of %d columns: %q", n, l)
	}
	for _, out := range []string{fit.String(), wide.String()} {
		if !strings.Contains(out, "\nPer target (medians of the trials, in ms; study.json has their intervals and max):\n") ||
			!strings.Contains(out, "GET /p1.php") || !strings.Contains(out, "POST /checko...-cart-id-0123456789") {
			t.Errorf("no per-target table:\n%s", out)
		}
	}
	if want := "\nserver=serial transport=tcp keepalive=off\n  1  GET /p0.php"; !strings.Contains(fit.String(), "series, then each level's targets:\n") ||
		!strings.Contains(fit.String(), want) {
		t.Errorf("the fitted per-target table is not grouped by series:\n%s", fit.String())
	}
	if !strings.Contains(strings.Join(strings.Fields(wide.String()), " "), "server=serial transport=tcp keepalive=off 1 GET /p0.php 1 0 1.00 10.00 GET /p1.php") {
		t.Errorf("the wide per-target table has no series on its level's first row:\n%s", wide.String())
	}

	withTargets(res, 12)
	var cut bytes.Buffer
	if err := StudyText(&cut, res, 100); err != nil {
		t.Fatal(err)
	}
	out := cut.String()
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "Per target (the 10 with the most requests of a series' 12;") {
		t.Errorf("the heading does not say the targets were cut:\n%s", out)
	}
	if strings.Contains(out, "GET /p0.php") || strings.Contains(out, "GET /p1.php") || !strings.Contains(out, "GET /p2.php") {
		t.Errorf("not the 10 targets with the most requests:\n%s", out)
	}
}

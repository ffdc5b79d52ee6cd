package page

import (
	"bytes"
	"fmt"
	"html"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/trials"
)

func ip(v int) *int         { return &v }
func fp(v float64) *float64 { return &v }

// TestAnswerSentences: synthetic comparison rows become one sentence per
// group (the factor when given, else the pair), with the estimate, its
// interval and the levels where each verdict holds, the directional
// verdicts first, and the caveats of the levels named in the same
// sentence.
func TestAnswerSentences(t *testing.T) {
	rows := []answerRow{
		{Series: "unix", Baseline: "tcp", Level: ip(1), Metric: "requests_per_second", Ratio: fp(1.01), CI: []float64{0.97, 1.05}, Verdict: "same"},
		{Series: "unix", Baseline: "tcp", Level: ip(101), Metric: "requests_per_second", Ratio: fp(1.41), CI: []float64{1.12, 1.60}, Verdict: "faster"},
		{Series: "unix", Baseline: "tcp", Level: ip(301), Metric: "requests_per_second", Ratio: fp(1.38), CI: []float64{1.20, 1.75}, Verdict: "faster",
			Caveats: []string{"tcp's listen queue overflowed"}},
		{Series: "unix", Baseline: "tcp", Level: ip(1), Metric: "p99_ms", Ratio: fp(0.5), CI: []float64{0.4, 0.6}, Verdict: "lower"},
		{Group: "keep-alive", Series: "thin -k", Baseline: "thin", Level: ip(8), Metric: "requests_per_second", Ratio: fp(2.0), CI: []float64{1.9, 2.1}, Verdict: "faster",
			Caveats: []string{"thin had 5% failed"}},
		{Group: "keep-alive", Series: "thin -k", Baseline: "thin", Level: ip(16), Metric: "requests_per_second", Ratio: fp(2.2), CI: []float64{2.0, 2.4}, Verdict: "faster",
			Caveats: []string{"thin had 5% failed"}},
	}
	got := answerSentences(rows)
	want := []string{
		"unix vs tcp: 1.38–1.41× the req/s (faster) [1.12, 1.75] at c = 101 and 301, same at c = 1; " +
			"0.50× the p99 (lower) [0.40, 0.60] at c = 1; but tcp's listen queue overflowed at c = 301.",
		"keep-alive: thin -k vs thin: 2.00–2.20× the req/s (faster) [1.90, 2.40] at c = 8 and 16; but thin had 5% failed at c = 8 and 16.",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sentences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A group where nothing differs says so, once, with its levels; a
	// row without a level (two whole files) names none.
	got = answerSentences([]answerRow{
		{Series: "a.json", Baseline: "b.json", Metric: "p99_ms", Ratio: fp(1.0), Verdict: "same"},
		{Series: "x", Baseline: "y", Level: ip(2), Metric: "requests_per_second", Ratio: fp(0.7), CI: []float64{0.6, 0.8}, Verdict: "slower"},
		{Series: "x", Baseline: "y", Level: ip(4), Metric: "requests_per_second", Ratio: fp(1.0), Verdict: "same"},
		{Series: "x", Baseline: "y", Level: ip(8), Metric: "requests_per_second", Ratio: fp(1.0), Verdict: "same"},
	})
	want = []string{"a.json vs b.json: same in p99.", "x vs y: 0.70× the req/s (slower) [0.60, 0.80] at c = 2, same at c = 4 and 8."}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sentences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := answerSentences(nil); len(got) != 0 {
		t.Errorf("no rows gave %q", got)
	}
}

// TestCausesOnThePage: every cause the record carries for a level (a note,
// a listen queue that overflowed) is on the page where it explains
// something: the tooltip of the level's ringed points, the level's row,
// the series' notes list, and the answers' caveat.
func TestCausesOnThePage(t *testing.T) {
	data, err := os.ReadFile("testdata/trials.json")
	if err != nil {
		t.Fatal(err)
	}
	const note = "the server closed 3 kept connections before a request"
	data = bytes.Replace(data, []byte(`"notes": []`), []byte(`"notes": ["`+note+`"]`), 1)
	d, err := document.Read("trials.json", data)
	if err != nil {
		t.Fatal(err)
	}
	sw := document.SweepOf(d)
	page := renderData(t, "trials.json", data)
	noted := &sw.Series[0].Levels[0]
	if len(noted.Notes) != 1 {
		t.Fatalf("the note did not land on the first level: %q", noted.Notes)
	}
	at := fmt.Sprintf("%s, c=%d: ", sw.Series[0].Label, noted.Concurrency)
	if !regexp.MustCompile(`class="fail"[^>]*/><path class="pt[^"]*" d="[^"]*"><title>` + regexp.QuoteMeta(html.EscapeString(at)) + `[^<]*; cause: ` + note).MatchString(page) {
		t.Errorf("the noted level's point is not ringed with the note in its tooltip")
	}
	if !strings.Contains(page, html.EscapeString(fmt.Sprintf("c = %d: %s", noted.Concurrency, note))) {
		t.Errorf("the series' notes list lacks the note at its level")
	}
	overflows := 0
	for _, se := range sw.Series {
		var levels []string
		for _, lv := range se.Levels {
			n, _ := lv.ListenOverflow()
			if n == 0 {
				continue
			}
			overflows++
			levels = append(levels, strconv.Itoa(lv.Concurrency))
			why := fmt.Sprintf("the listen queue overflowed (%d SYNs dropped", n)
			if !strings.Contains(page, html.EscapeString(fmt.Sprintf("%s, c=%d: ", se.Label, lv.Concurrency))) ||
				!regexp.MustCompile(regexp.QuoteMeta(html.EscapeString(fmt.Sprintf("%s, c=%d: ", se.Label, lv.Concurrency)))+`[^<]*`+regexp.QuoteMeta(why)).MatchString(page) {
				t.Errorf("%s c=%d: no point tooltip with %q", se.Label, lv.Concurrency, why)
			}
			row := fmt.Sprintf(`<th scope="row">%s</th><td class="num">%d</td>`, html.EscapeString(se.Label), lv.Concurrency)
			i := strings.Index(page, row)
			if i < 0 || !strings.Contains(page[i:i+strings.Index(page[i:], "</tr>")], "listen queue overflowed") {
				t.Errorf("%s c=%d: the level's row does not name the listen queue", se.Label, lv.Concurrency)
			}
		}
		if len(levels) > 0 {
			want := html.EscapeString(fmt.Sprintf("%s's listen queue overflowed at c = %s", se.Label, strings.Join(levels, " and ")))
			if !strings.Contains(page[:strings.Index(page, "<nav")], want) {
				t.Errorf("the answers lack the caveat %q", want)
			}
		}
	}
	if overflows == 0 {
		t.Fatal("trials.json has no level with listen queue overflows")
	}
}

// TestAnswerGroupsFromFile: a comparison that names its factor (group or
// factor key) is answered under that group, one sentence for its rows.
func TestAnswerGroupsFromFile(t *testing.T) {
	cs := []trials.Comparison{
		{Series: "unix", Baseline: "tcp", Factor: "transport", Concurrency: 1, Metric: "requests_per_second", Ratio: fp(1.2), RatioCI95: []float64{1.1, 1.3}, Verdict: "faster"},
		{Series: "unix", Baseline: "tcp", Factor: "transport", Concurrency: 2, Metric: "requests_per_second", Ratio: fp(1.0), Verdict: "same"},
		{Series: "thin -k", Baseline: "thin", Factor: "keep-alive", Concurrency: 1, Metric: "p99_ms", Ratio: fp(1.0), Verdict: "same",
			FailedRatio: &trials.Sides{Series: 0.1}},
	}
	got := answerSentences(compareAnswerRows(cs))
	want := []string{"transport: unix vs tcp: 1.20× the req/s (faster) [1.10, 1.30] at c = 1, same at c = 2.",
		"keep-alive: thin -k vs thin: same in p99 at c = 1; but up to 10.0% failed at c = 1."}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sentences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAnswerNoAnswer: a comparison whose side never answered (every
// request failed) is said to have no verdict because of it, with what
// the requests failed on, never "too few for the test".
func TestAnswerNoAnswer(t *testing.T) {
	why := "tls: every request failed (connect: the server's TLS certificate does not verify)"
	cs := []trials.Comparison{
		{Series: "tls", Baseline: "plain", Factor: "tls", Concurrency: 1, Metric: "requests_per_second", Ratio: fp(0), Verdict: "none",
			Trials: 4, BaselineTrials: 4, Unanswered: "series", Why: why},
	}
	got := strings.Join(answerSentences(compareAnswerRows(cs)), "\n")
	want := "tls: tls vs plain: no verdict on req/s, a side never answered at c = 1; but " + why + " at c = 1."
	if got != want {
		t.Errorf("sentence:\n%s\nwant:\n%s", got, want)
	}
}

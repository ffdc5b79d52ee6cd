package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"image/png"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/trials"
)

// level is a synthetic Summary of one sweep level.
func level(c int, rps, p99 float64, failed int64) stats.Summary {
	s := fixed()
	s.Concurrency, s.Requests = c, 1000
	s.Complete, s.Failed = 1000-failed, failed
	s.Failures = stats.Failures{Connect: failed}
	s.Non2xx = 0
	s.RequestsPerSecond = rps
	s.TransferRate = rps * 1.25
	s.ConnectionTimes.Total.Mean = p99 / 2
	s.ConnectionTimes.Total.Max = p99 * 1.5
	s.Percentiles = map[string]float64{"50": p99 / 3, "66": p99 / 2.5, "75": p99 / 2, "80": p99 / 1.8,
		"90": p99 / 1.5, "95": p99 / 1.2, "98": p99 / 1.1, "99": p99, "100": p99 * 1.5}
	s.ErrorSamples = []stats.ErrorSample{}
	if failed > 0 {
		s.ErrorSamples = []stats.ErrorSample{{Message: "connect: connection refused", Count: failed}}
	}
	return s
}

// fixedSweep is a synthetic sweep: three series, one stopped early.
// withUse adds sampled backend use to a level.
func withUse(s stats.Summary) stats.Summary {
	s.Backend = &stats.BackendUsage{PIDs: []int{42}, CPUSeconds: 0.125, Samples: 4, PeakRSSBytes: 41 << 20, ProcessesMax: 5,
		PeakPSSBytes: 12 << 20, MeanPSSBytes: 11 << 20,
		FPMStatusEnd: map[string]string{"pool": "www", "listen queue": "3", "active processes": "4", "max children reached": "1"}}
	overflows := int64(175)
	s.ListenOverflows = &overflows
	s.ListenQueues = []stats.ListenQueue{{Address: "tcp:127.0.0.1:9001", Backlog: 100, PeakQueued: 101, Drops: &overflows}}
	return s
}

func fixedSweep() Sweep {
	rate := 0.1
	return Sweep{
		Levels: []int{1, 11, 21}, RequestsPerLevel: 1000, StopErrorRate: &rate, TimeTaken: 42.5,
		Series: []SweepSeries{
			{Label: "serial", Target: stats.TargetInfo{URL: "fcgi://127.0.0.1:9001/x.php", Protocol: "fcgi", Network: "tcp", Address: "127.0.0.1:9001"},
				Levels: []stats.Summary{level(1, 98.51, 10.42, 0), withUse(level(11, 99.02, 112.3, 0)), level(21, 97.7, 215.25, 0)}},
			{Label: "prefork:4, \"ka\"", KeepAlive: true, Target: stats.TargetInfo{URL: "fcgi://unix:/tmp/p.sock:/x.php", Protocol: "fcgi", Network: "unix", Address: "/tmp/p.sock"},
				Levels: []stats.Summary{level(1, 99.5, 10.2, 0), level(11, 395.25, 31.5, 0), level(21, 398.125, 55.75, 0)}},
			{Label: "broken", Target: stats.TargetInfo{URL: "http://127.0.0.1:1/", Protocol: "http", Network: "tcp", Address: "127.0.0.1:1"},
				Levels: []stats.Summary{level(1, 50, 1, 0), level(11, 12.5, 3.25, 700)},
				Stop:   &SweepStop{Concurrency: 11, ErrorRate: 0.7, Reason: "700 of 1000 requests failed at concurrency 11 (ratio 0.7 > 0.1): connect 700 (connect: connection refused)"}},
		},
	}
}

func TestGoldenSweepCSV(t *testing.T) {
	sw := fixedSweep()
	var b bytes.Buffer
	if err := SweepCSV(&b, &sw); err != nil {
		t.Fatal(err)
	}
	golden(t, "sweep.csv.golden", b.Bytes())
	rows, err := csv.NewReader(bytes.NewReader(b.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// One row per series and level run: 3 + 3 + 2.
	if len(rows) != 1+8 || !reflect.DeepEqual(rows[0], SweepCSVHeader) {
		t.Fatalf("%d rows, header %v", len(rows), rows[0])
	}
	if got := rows[4]; got[0] != `prefork:4, "ka"` || got[1] != "1" || got[6] != "99.50" || got[10] != "10.200" {
		t.Errorf("row 4: %q", got)
	}
	if got := rows[2][13:]; !reflect.DeepEqual(got, []string{"0.125", "42991616", "5", "3", "4", "1", "175", "12582912", "11534336", "", "", "", "", ""}) {
		t.Errorf("row 2, backend and php-fpm columns, no trial columns: %q", got)
	}
}

// TestSweepTrials: a sweep of trials puts its trial count and intervals in
// sweep.csv, "± x%" and the verdict against the baseline in the table, and
// the comparisons in sweep.json.
func TestSweepTrials(t *testing.T) {
	sw := fixedSweep()
	base, other := sw.Series[0].Label, sw.Series[1].Label
	for i := range sw.Series[:2] {
		l := &sw.Series[i].Levels[0]
		l.Repeated = &stats.Repeated{Trials: make([]*stats.Record, 5), RequestsPerSecondCI95: []float64{l.RequestsPerSecond * 0.98, l.RequestsPerSecond * 1.03},
			P99Ms: 10.5, P99MsCI95: []float64{10, 12}, Confidence: 0.9375}
	}
	ratio := 0.8
	sw.SweepTrials = &SweepTrials{Repeat: 5, Seed: 7, Noise: 0.02, Baseline: base, Comparisons: []trials.Comparison{
		{Series: other, Baseline: base, Concurrency: sw.Levels[0], Metric: trials.MetricRequestsPerSecond,
			Ratio: &ratio, RatioCI95: []float64{0.78, 0.82}, PValue: 0.008, Verdict: trials.Slower,
			FailedRatio: &trials.Sides{Series: 0.62}}}}
	var csvOut, table, js bytes.Buffer
	if err := errors.Join(SweepCSV(&csvOut, &sw), SweepTable(&table, &sw), SweepJSON(&js, &sw)); err != nil {
		t.Fatal(err)
	}
	rows, _ := csv.NewReader(&csvOut).ReadAll()
	n := len(SweepCSVHeader)
	if got := rows[1][n-5:]; got[0] != "5" || got[3] != "10.000" || got[4] != "12.000" || rows[1][10] != "10.500" {
		t.Errorf("trial columns %q, p99_ms %q: want 5 trials, p99 interval 10 to 12, p99 the trials' median", got, rows[1][10])
	}
	if rows[2][n-5] != "" {
		t.Errorf("a level without trials has trial columns: %q", rows[2][n-5:])
	}
	if s := table.String(); !strings.Contains(s, "± 3.0%") || !strings.Contains(s, "slower (62% failed)") || !strings.Contains(s, "vs "+base) {
		t.Errorf("table without ±, verdict or its failures:\n%s", s)
	}
	for _, k := range []string{`"comparisons"`, `"ratio_ci95"`, `"requests_per_second_ci95"`, `"p99_ms_ci95"`, `"trials"`, `"seed": 7`, `"failed_ratio"`} {
		if !strings.Contains(js.String(), k) {
			t.Errorf("sweep.json has no %s", k)
		}
	}
}

func TestGoldenSweepTable(t *testing.T) {
	sw := fixedSweep()
	sw.Interrupted = true
	var b bytes.Buffer
	if err := SweepTable(&b, &sw); err != nil {
		t.Fatal(err)
	}
	golden(t, "sweep_table.golden", b.Bytes())
	out := b.String()
	for _, want := range []string{
		"broken: stopped after concurrency 11: 700 of 1000 requests failed",
		"Interrupted",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[4], "         21") || !strings.HasSuffix(lines[4], "-") {
		t.Errorf("the level the stopped series skipped: %q", lines[4])
	}
}

func TestSweepJSONRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		sw   Sweep
	}{
		{"stopped", fixedSweep()},
		{"no stop rule, time limit", func() Sweep {
			sw := fixedSweep()
			sw.StopErrorRate, sw.RequestsPerLevel, sw.SecondsPerLevel, sw.Interrupted = nil, 0, 2.5, true
			return sw
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := SweepJSON(&b, &tc.sw); err != nil {
				t.Fatal(err)
			}
			var back Sweep
			if err := json.Unmarshal(b.Bytes(), &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tc.sw) {
				t.Errorf("round trip differs:\n%+v\n%+v", back, tc.sw)
			}
			var raw map[string]any
			_ = json.Unmarshal(b.Bytes(), &raw)
			for _, k := range []string{"levels", "requests_per_level", "stop_error_rate", "series", "interrupted"} {
				if _, ok := raw[k]; !ok {
					t.Errorf("no key %q", k)
				}
			}
		})
	}
}

func TestSweepChart(t *testing.T) {
	empty := Sweep{Levels: []int{1, 2}, RequestsPerLevel: 10, Series: []SweepSeries{{Label: "nothing completed",
		Levels: []stats.Summary{{Concurrency: 1, Failed: 10}}}}}
	one := fixedSweep()
	one.Levels = []int{1}
	for i := range one.Series {
		one.Series[i].Levels = one.Series[i].Levels[:1]
	}
	many := fixedSweep()
	for i := range 6 { // more series than colours
		se := many.Series[i%2]
		se.Label += " copy " + string(rune('a'+i))
		many.Series = append(many.Series, se)
	}
	withBackend := fixedSweep()
	withBackend.Series[0].Levels[1].Backend = &stats.BackendUsage{CPUSeconds: 1.5, Samples: 3, PeakRSSBytes: 1 << 20, ProcessesMax: 2}
	withBackend.Series[0].Levels[1].TimeTaken = 2
	withBackend.Series[0].Levels[1].Backend.MeanPSSBytes = 1 << 19
	for _, tc := range []struct {
		name string
		sw   Sweep
	}{{"fixed", fixedSweep()}, {"no data", empty}, {"one level", one}, {"nine series", many}, {"backend", withBackend}} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := SweepChart(&b, &tc.sw, "png"); err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(&b)
			if err != nil {
				t.Fatal(err)
			}
			panels, failed, backend := 2, false, false
			for _, se := range tc.sw.Series {
				for _, l := range se.Levels {
					failed = failed || l.Failed > 0                            // a panel of the failure ratio
					backend = backend || (l.Backend != nil && l.TimeTaken > 0) // panels of the backend's CPU and memory
				}
			}
			if failed {
				panels++
			}
			if backend {
				panels += 2
			}
			height, svgHeight := panels*PanelHeightPx, strconv.Itoa(panels*360)+"pt"
			if r := img.Bounds(); r.Dx() != ChartWidthPx || r.Dy() != height {
				t.Errorf("png is %v, want %dx%d", r, ChartWidthPx, height)
			}
			b.Reset()
			if err := SweepChart(&b, &tc.sw, "svg"); err != nil {
				t.Fatal(err)
			}
			svg := b.String()
			var doc struct {
				XMLName xml.Name
				Width   string `xml:"width,attr"`
				Height  string `xml:"height,attr"`
			}
			if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
				t.Fatalf("svg does not parse: %v", err)
			}
			if doc.XMLName.Local != "svg" || doc.Width != "648pt" || doc.Height != svgHeight {
				t.Errorf("svg root %v %s x %s", doc.XMLName, doc.Width, doc.Height)
			}
			for _, want := range []string{"requests / second", "p99 latency (ms)", "concurrency (connections)"} {
				if !strings.Contains(svg, want) {
					t.Errorf("svg lacks %q", want)
				}
			}
			for _, se := range tc.sw.Series {
				if !strings.Contains(svg, xmlEscape(se.Label)) {
					t.Errorf("svg legend lacks %q", se.Label)
				}
			}
			for _, want := range []string{"failed requests (failed / finished)", "ringed: a level with failed requests"} {
				if strings.Contains(svg, want) != failed {
					t.Errorf("svg has %q: %v, want %v", want, !failed, failed)
				}
			}
			if tc.name == "fixed" && !strings.Contains(svg, "broken (stopped at c=11)") {
				t.Error("svg legend does not mark the stopped series")
			}
		})
	}
	if err := SweepChart(&bytes.Buffer{}, &empty, "gif"); err == nil {
		t.Error("no error for format gif")
	}
}

func xmlEscape(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func TestCapacityChart(t *testing.T) {
	pts := []CapacityPoint{{10, 11, true}, {20, 12, true}, {40, 300, false}, {30, 45, true}}
	for _, tc := range []struct {
		name  string
		pts   []CapacityPoint
		bound float64
	}{{"steps", pts, 50}, {"no latency objective", pts, 0}, {"no steps", nil, 50}} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := CapacityChart(&b, tc.pts, "offered rate (req/s)", tc.bound, "png"); err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(&b)
			if err != nil {
				t.Fatal(err)
			}
			if r := img.Bounds(); r.Dx() != ChartWidthPx || r.Dy() != ChartHeightPx/2 {
				t.Errorf("png is %v", r)
			}
			b.Reset()
			if err := CapacityChart(&b, tc.pts, "offered rate (req/s)", tc.bound, "svg"); err != nil {
				t.Fatal(err)
			}
			svg := b.String()
			if err := xml.Unmarshal(b.Bytes(), new(struct{ XMLName xml.Name })); err != nil {
				t.Fatalf("svg does not parse: %v", err)
			}
			if !strings.Contains(svg, "offered rate (req/s)") || strings.Contains(svg, "objective p99 &lt;= 50 ms") != (tc.bound > 0) ||
				strings.Contains(svg, "step failed") != (tc.pts != nil) {
				t.Errorf("svg lacks the axis, the objective line or the legend")
			}
			if strings.Contains(svg, "log scale") != (tc.pts != nil) { // 11 to 300 ms: a log scale
				t.Errorf("log scale %v, want %v", strings.Contains(svg, "log scale"), tc.pts != nil)
			}
		})
	}
}

// TestLatencyOfLabelled: a result of trials whose medians differ from
// its pooled run's figures gives the medians of mean, p50, p99 and max,
// labelled as medians, and the pooled run's own p90; a run without
// trials gives its own figures, not labelled.
func TestLatencyOfLabelled(t *testing.T) {
	var s stats.Summary
	s.Percentiles = map[string]float64{"50": 1, "90": 2, "99": 3}
	s.ConnectionTimes.Total.Mean, s.ConnectionTimes.Total.Max = 1.5, 4
	if got, want := LatencyOf(&s), (Latency{Mean: 1.5, P50: 1, P90: 2, P99: 3, Max: 4}); got != want {
		t.Errorf("one run: %+v, want %+v", got, want)
	}
	s.Repeated = &stats.Repeated{P50Ms: 10, P99Ms: 30, MeanMs: 15, MaxMs: 40}
	if got, want := LatencyOf(&s), (Latency{Mean: 15, P50: 10, P90: 2, P99: 30, Max: 40, Medians: true}); got != want {
		t.Errorf("trials: %+v, want %+v", got, want)
	}
	s.MeanMs, s.MaxMs = 0, 0 // saved before the medians of the mean and max
	if got := LatencyOf(&s); got.Mean != 1.5 || got.Max != 4 {
		t.Errorf("trials without medians of mean and max: %+v", got)
	}
	// A level of trials saved by an earlier version, with its trials and
	// no medians at all: its own figures, not zeros, and not labelled.
	s.Repeated = &stats.Repeated{}
	if got, want := LatencyOf(&s), (Latency{Mean: 1.5, P50: 1, P90: 2, P99: 3, Max: 4}); got != want {
		t.Errorf("old trial level: %+v, want %+v", got, want)
	}
}

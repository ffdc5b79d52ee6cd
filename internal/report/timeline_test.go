package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/stats"
)

// stallTimeline is a synthetic 20-window run whose window 7 stalled.
func stallTimeline() *stats.Timeline {
	tl := &stats.Timeline{Start: stats.Wall{Time: time.Unix(1764556800, 0)}, Width: 100 * time.Millisecond}
	tl.Cover(2 * time.Second)
	for i := range tl.Windows {
		w := &tl.Windows[i]
		for j := range 50 {
			v := int64(2e6 + j*2e4)
			if i == 7 && j < 5 {
				v = 6e8
			}
			w.Complete++
			w.AddLatency(v)
		}
		w.BytesRead = 50 * 100
	}
	tl.Windows[7].Failures[load.Receive] = 3
	tl.Windows[3].Backend = &stats.BackendSample{CPUSeconds: 0.05, PSSBytes: 12 << 20, Processes: 2, ListenQueued: 4}
	tl.Windows[4].Backend = &stats.BackendSample{ListenQueued: 1}
	return tl
}

// TestTimelineCSV: one row per window under the header, the failures by
// class, the backend's cells empty where it was not sampled.
func TestTimelineCSV(t *testing.T) {
	var b bytes.Buffer
	if err := TimelineCSV(&b, stallTimeline()); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := strings.Split(strings.TrimSuffix(TimelineCSVHeader, "\n"), ",")
	if len(rows) != 21 || strings.Join(rows[0], ",") != strings.Join(head, ",") {
		t.Fatalf("%d rows, header %v", len(rows), rows[0])
	}
	col := func(row int, name string) string {
		for i, h := range head {
			if h == name {
				return rows[row+1][i]
			}
		}
		t.Fatalf("no column %s", name)
		return ""
	}
	for _, c := range []struct {
		row        int
		name, want string
	}{
		{7, "start_s", "0.700000"}, {7, "failed", "3"}, {7, "receive", "3"}, {7, "latency_max_ms", "600.000"},
		{7, "requests_per_second", "500.00"}, {0, "failed", "0"}, {0, "start_unix", "1764556800.000000"},
		{3, "backend_pss_bytes", "12582912"}, {3, "listen_queued", "4"}, {4, "backend_cpu_seconds", ""},
		{4, "listen_queued", "1"}, {5, "backend_processes", ""}, {5, "listen_queued", ""},
	} {
		if got := col(c.row, c.name); got != c.want {
			t.Errorf("window %d %s = %q, want %q", c.row, c.name, got, c.want)
		}
	}
}

// TestWorstWindowLine: the text report names a window that stood out, in
// a line after ab's block, which stays as it was.
func TestWorstWindowLine(t *testing.T) {
	s := fixed()
	var plain, with bytes.Buffer
	Text(&plain, &s, TextOptions{})
	rec := &stats.Record{Timeline: stallTimeline()}
	s.WorstWindow = stats.SummaryOf(rec).WorstWindow
	if s.WorstWindow == nil || s.WorstWindow.Index != 7 {
		t.Fatalf("worst window %+v", s.WorstWindow)
	}
	Text(&with, &s, TextOptions{})
	line := "Worst window:           0.700-0.800 s: p99 589.8 ms (median window 2.8 ms), max 600.0 ms, 500 req/s (median 500), 3 failed\n"
	if !strings.Contains(with.String(), line) {
		t.Errorf("no line %q in\n%s", line, with.String())
	}
	if got := strings.Replace(with.String(), line, "", 1); got != plain.String() {
		t.Errorf("the report differs beyond the line:\n%s", got)
	}
}

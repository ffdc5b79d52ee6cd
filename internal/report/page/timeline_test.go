package page

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/stats"
)

// withTimeline returns testdata/bench.json with a synthetic timeline in
// its record: 20 windows of 100 ms, a stall in window 7 with failures,
// and the backend sampled.
func withTimeline(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "bench.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	tl := &stats.Timeline{Start: stats.Wall{Time: time.Unix(1764556800, 0)}, Width: 100 * time.Millisecond}
	tl.Cover(2 * time.Second)
	for i := range tl.Windows {
		w := &tl.Windows[i]
		for j := range 40 {
			v := int64(2e6 + j*1e4)
			if i == 7 && j < 3 {
				v = 6e8
			}
			w.Complete++
			w.AddLatency(v)
		}
		w.Backend = &stats.BackendSample{CPUSeconds: 0.05, PSSBytes: int64(20+i) << 20, Processes: 3, ListenQueued: i % 3}
	}
	tl.Windows[7].Failures[load.Receive] = 2
	rec := doc["record"].(map[string]any)
	rec["listen_queues"] = []any{map[string]any{"address": "unix:/x.sock", "backlog": 2, "peak_queued": 2}}
	rec["backend_lost"] = map[string]any{"after_requests": 700, "at_seconds": 1.75, "error": "connection refused"}
	b, _ := json.Marshal(tl)
	var raw any
	json.Unmarshal(b, &raw)
	rec["timeline"] = raw
	out, _ := json.Marshal(doc)
	return out
}

// TestTimelineCharts: a bench result whose record has a timeline gets its
// charts (req/s with failures, latency, backend memory and CPU, listen
// queue), one point with a tooltip per window, the first failure, the
// slowest request, the full listen queue and the loss of the backend
// marked; one without a timeline gets none.
func TestTimelineCharts(t *testing.T) {
	page := renderData(t, "bench.json", withTimeline(t))
	for _, want := range []string{
		"<h3>Timeline</h3>", "20 windows of 100 ms",
		"requests per second, window by window", "latency, window by window",
		"backend memory (PSS), window by window", "backend CPU, window by window", "listen queue, window by window",
		"first failure (0.700 s)", "slowest request (600.0 ms)", "listen queue full (0.200 s, backlog 2)", "backend lost (1.750 s)",
		"0.700-0.800 s: 400 req/s (40 complete); 2 failed of 42 finished",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("no %q on the page", want)
		}
	}
	if n := strings.Count(page, "<g class=\"mark\">"); n != 4*5 {
		t.Errorf("%d marks, want 4 on each of the 5 charts", n)
	}
	if n := strings.Count(page, " s: p50 "); n != 3*20 {
		t.Errorf("%d latency tooltips, want 3 lines × 20 windows", n)
	}
	plain, err := os.ReadFile(filepath.Join("testdata", "bench.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p := renderData(t, "bench.json", plain); strings.Contains(p, "Timeline") {
		t.Error("a record without a timeline gets a Timeline section")
	}
}

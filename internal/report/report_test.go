package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/stats"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fixed is a synthetic summary: golden files never come from a live run.
func fixed() stats.Summary {
	return stats.Summary{
		Target:         stats.TargetInfo{URL: "fcgi://unix:/run/php/fpm.sock:/index.php?x=1", Protocol: "fcgi", Network: "unix", Address: "/run/php/fpm.sock"},
		ServerSoftware: "", ServerHostname: "unix:/run/php/fpm.sock", ServerPort: "",
		DocumentPath: "/index.php?x=1", DocumentLength: 1234, Concurrency: 10, Requests: 1000,
		Method: "POST", KeepAlive: true, TimeTaken: 0.5123,
		Complete: 998, Failed: 3,
		Failures:          stats.Failures{Connect: 1, Receive: 0, Length: 1, Exceptions: 0, Timeout: 1, Protocol: 0},
		Non2xx:            2,
		KeepAliveRequests: 998, Reconnects: 4,
		TotalTransferred: 1432000, TotalBodySent: 12000, HTMLTransferred: 1231532, StderrBytes: 17,
		RequestsPerSecond: 1948.08, TimePerRequest: 5.133, TimePerRequestAll: 0.513, TransferRate: 2729.77,
		ConnectionTimes: stats.ConnectionTimes{
			Connect:    stats.PhaseStats{Min: 0, Mean: 0.02, SD: 0.1, Median: 0, Max: 1.2},
			Processing: stats.PhaseStats{Min: 1.1, Mean: 5.1, SD: 2.3, Median: 4.6, Max: 31.7},
			Waiting:    stats.PhaseStats{Min: 1.0, Mean: 5.0, SD: 2.2, Median: 4.4, Max: 31.5},
			Total:      stats.PhaseStats{Min: 1.1, Mean: 9.1, SD: 1.3, Median: 4.6, Max: 31.8},
		},
		Percentiles: map[string]float64{"50": 4.6, "66": 5.2, "75": 5.9, "80": 6.4, "90": 8.1, "95": 10.2, "98": 14.6, "99": 19.9, "100": 31.8},
		Spectrum:    map[string]float64{"50": 4.6, "75": 5.9, "90": 8.1, "95": 10.2, "99": 19.9, "99.9": 28.5, "99.99": 31.1, "99.999": 31.8, "100": 31.8},
		Client:      stats.ClientHealth{CPUUserSeconds: 0.25, CPUSysSeconds: 0.5, CPUPercent: 146.4, Cores: 2, Scheduling: "SCHED_BATCH", SchedulerLateMaxMs: 1.5, Warnings: []string{}},
		ErrorSamples: []stats.ErrorSample{
			{Message: "connect: connection refused", Count: 1},
			{Message: "fcgi: timeout", Count: 1},
		},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// TestGoldenTextFast: a fast backend, whose median ab's whole-millisecond
// table rounds to 0, gets one line of exact figures under the table; ab's
// lines stay as they are.
func TestGoldenTextFast(t *testing.T) {
	s := fixed()
	s.Percentiles = map[string]float64{"50": 0.123, "66": 0.15, "75": 0.2, "80": 0.25, "90": 0.4, "95": 0.6, "98": 0.9, "99": 1.234, "100": 2.6}
	var b bytes.Buffer
	if err := Text(&b, &s, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "text_fast.golden", b.Bytes())
	if !strings.Contains(b.String(), "  50%      0\n") || !strings.Contains(b.String(), "  99%      1\n 100%      3 (longest request)\n  (exact: 50% 0.123 ms, 99% 1.234 ms; --percentiles for the full spectrum)\n") {
		t.Errorf("no exact line under ab's table:\n%s", b.String())
	}
	// With the spectrum printed, the line is not needed.
	b.Reset()
	Text(&b, &s, TextOptions{Spectrum: true})
	if strings.Contains(b.String(), "(exact:") {
		t.Errorf("exact line with --percentiles:\n%s", b.String())
	}
}

func TestGoldenText(t *testing.T) {
	s := fixed()
	var b bytes.Buffer
	if err := Text(&b, &s, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "text.golden", b.Bytes())
	if !strings.Contains(b.String(), "ERROR: The median and mean for the total time are more than twice") {
		t.Error("no ERROR line for a total mean 3.5 sd away from the median")
	}
	// ab's column: every "Label:" line has its value in column 25.
	for _, l := range strings.Split(b.String(), "\n") {
		if i := strings.Index(l, ": "); i > 0 && i < 23 && !strings.HasPrefix(l, " ") && !strings.Contains(l[:i], "(") &&
			!strings.HasPrefix(l, "Connect:") && !strings.HasPrefix(l, "Processing:") && !strings.HasPrefix(l, "Waiting:") && !strings.HasPrefix(l, "Total:") &&
			!strings.HasPrefix(l, "WARNING") && !strings.HasPrefix(l, "ERROR") {
			if len(l) > 24 && l[23] != ' ' {
				t.Errorf("value not in column 25: %q", l)
			}
		}
	}
}

func TestGoldenTextHTTPNoFailures(t *testing.T) {
	s := fixed()
	s.Target = stats.TargetInfo{URL: "http://127.0.0.1:8080/", Protocol: "http", Network: "tcp", Address: "127.0.0.1:8080"}
	s.ServerSoftware, s.ServerHostname, s.ServerPort, s.DocumentPath = "nginx/1.22.1", "127.0.0.1", "8080", "/"
	s.HTTPVersion, s.Method, s.KeepAlive = "1.0", "GET", false
	s.Failed, s.Failures, s.Non2xx, s.TotalBodySent, s.Reconnects, s.ErrorSamples = 0, stats.Failures{}, 0, 0, 0, nil
	s.ConnectionTimes.Total.SD = 3
	s.Interrupted = true
	var b bytes.Buffer
	if err := Text(&b, &s, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "text_http.golden", b.Bytes())
	// HTTP/1.0 without -k sends no Connection header: the line says so.
	if !strings.Contains(b.String(), "Keep-alive:             off (HTTP/1.0, no Connection header sent)\n") {
		t.Error("the Keep-alive line does not say what was sent")
	}
	for _, absent := range []string{"Failed requests:        0\n   (", "Keep-Alive requests", "Non-2xx", "Total body sent", "FastCGI stderr", "ERROR: The median and mean for the total"} {
		if strings.Contains(b.String(), absent) {
			t.Errorf("report has %q", absent)
		}
	}
	for _, present := range []string{"WARNING: The median and mean for the total time", "Interrupted:", "HTTP/1.0 GET"} {
		if !strings.Contains(b.String(), present) {
			t.Errorf("report lacks %q", present)
		}
	}
}

func TestGoldenTextOpenModel(t *testing.T) {
	s := fixed()
	s.Open = &stats.OpenModel{RateAsked: 50, RateAchieved: 49.87, LateRequests: 51, LateMeanMs: 420.5, LateMaxMs: 990.2, CeilingLate: 49, SchedulerLateMaxMs: 1.2,
		DueRequests: 1003, UnsentRequests: 3, UnsentInFlight: 1, MeanInFlight: 9.99, ClientLatenessMs: &stats.Lateness{P50: 0.008, P99: 0.041, Max: 1.2}}
	s.UncorrectedPercentiles = map[string]float64{"50": 4.1, "66": 4.5, "75": 5.0, "80": 5.5, "90": 6.1, "95": 7.2, "98": 9.6, "99": 12.9, "100": 1001.8}
	s.Client.Warnings = []string{"client CPU at 190% of 2 cores: the client may be the bottleneck"}
	s.ABCompat = true
	s.Notes = []string{"the server closed 4 kept connections before a request; each was redialed"}
	s.TLS = &stats.TLSInfo{Protocol: "TLSv1.3", Cipher: "TLS_AES_128_GCM_SHA256", TempKey: "X25519", ServerName: "localhost", Handshakes: 10, Resumed: 9}
	s.Balance = "round-robin"
	s.Upstreams = []stats.UpstreamSummary{
		{Address: "tcp:127.0.0.1:3000", Requests: 500, Complete: 499, Failed: 1, RequestsPerSecond: 974.1, MeanMs: 5.12, P99Ms: 19.5},
		{Address: "unix:/run/w1.sock", Requests: 501, Complete: 501, RequestsPerSecond: 977.9, MeanMs: 5.01, P99Ms: 18.2},
	}
	s.Backend = &stats.BackendUsage{PIDs: []int{1234}, CPUSeconds: 0.75, CPUUserSeconds: 0.5, CPUSysSeconds: 0.25,
		PeakRSSBytes: 41 << 20, MeanRSSBytes: 40 << 20, ProcessesMax: 5, ProcessesMean: 5, Samples: 6,
		PeakPSSBytes: 12 << 20, MeanPSSBytes: 11 << 20, USSMeanBytes: 2 << 20, USSMaxBytes: 3 << 20,
		FPMStatusStart: map[string]string{"listen queue": "0", "active processes": "1", "max children reached": "0"},
		FPMStatusEnd:   map[string]string{"error": "status 404 (is pm.status_path = /status set?)"}}
	var b bytes.Buffer
	if err := Text(&b, &s, TextOptions{Spectrum: true}); err != nil {
		t.Fatal(err)
	}
	golden(t, "text_open.golden", b.Bytes())
}

func TestGoldenJSON(t *testing.T) {
	s := fixed()
	var b bytes.Buffer
	if err := JSON(&b, &s, nil); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.json.golden", b.Bytes())
	var back stats.Summary
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, s) {
		t.Errorf("JSON does not round-trip:\n%+v\n%+v", back, s)
	}
	var generic map[string]any
	_ = json.Unmarshal(b.Bytes(), &generic)
	for _, k := range []string{"complete_requests", "failed_requests", "failures", "non_2xx_responses", "keep_alive_requests",
		"document_length", "total_transferred_bytes", "html_transferred_bytes", "time_taken_seconds", "requests_per_second",
		"connection_times_ms", "percentiles_ms", "target"} {
		if _, ok := generic[k]; !ok {
			t.Errorf("JSON lacks key %q", k)
		}
	}
}

// TestABDate: the gnuplot date has a two-digit day, as ab writes it.
func TestABDate(t *testing.T) {
	d := time.Date(2026, 12, 1, 2, 3, 4, 0, time.Local)
	if got := d.Format(ABDateLayout); got != "Tue Dec 01 02:03:04 2026" {
		t.Errorf("ab date %q", got)
	}
}

func TestGoldenFiles(t *testing.T) {
	rows := []stats.RawRow{
		{Start: 3e6, Connect: 1e6, Processing: 4e6, Waiting: 3e6, Total: 5e6},
		{Start: 1e6, Connect: 0, Processing: 2e6, Waiting: 1e6, Total: 2e6},
	}
	var b bytes.Buffer
	if err := Gnuplot(&b, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || lines[0] != "starttime\tseconds\tctime\tdtime\tttime\twait" {
		t.Fatalf("gnuplot file:\n%s", b.String())
	}
	// Sorted by total time; times in whole ms; columns ctime dtime ttime wait.
	for i, want := range []string{"\t0\t2\t2\t1", "\t1\t4\t5\t3"} {
		if !strings.HasSuffix(lines[i+1], want) || strings.Count(lines[i+1], "\t") != 5 {
			t.Errorf("row %d = %q, want suffix %q", i, lines[i+1], want)
		}
	}
	b.Reset()
	sp := make([]float64, 101)
	for i := range sp {
		sp[i] = float64(i) * 0.25
	}
	if err := PercentileCSV(&b, sp); err != nil {
		t.Fatal(err)
	}
	golden(t, "percentiles.csv.golden", b.Bytes())
}

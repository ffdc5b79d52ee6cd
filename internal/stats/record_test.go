package stats_test

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/recorder"
	"github.com/backbench/backbench/internal/stats"
)

// results makes n deterministic results of every kind: fast and slow
// successes over two upstreams, refused connects, resets, timeouts.
func results(n int) []load.Result {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]load.Result, n)
	for i := range out {
		start := int64(1e9 + i*1000)
		total := int64(rng.ExpFloat64()*2e6) + 50_000
		r := load.Result{Start: start, Connected: start + total/10, Written: start + total/5,
			FirstByte: start + total/2, Done: start + total, Dialed: i%3 == 0, Status: 200,
			BytesRead: 300, BodyBytes: 100, BytesWritten: 80, Upstream: i % 2, KeepAlive: i%4 != 0}
		switch i % 17 {
		case 3:
			r.Class, r.Err = load.Connect, errors.New("connect: connection refused")
			r.Err = &wrapped{"connect: connection refused", syscall.ECONNREFUSED}
		case 5:
			r.Class, r.Err = load.Receive, &wrapped{"receive: connection reset by peer", syscall.ECONNRESET}
		case 7:
			r.Class, r.Err = load.Timeout, errors.New("timeout after 1s")
		case 11:
			r.Status = 404
		}
		out[i] = r
	}
	return out
}

type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

// recordOf records rs into a fresh Recorder and returns its stats.Record, with
// a plan of two upstreams.
func recordOf(rs []load.Result, start, end time.Time) *stats.Record {
	rec := recorder.New(recorder.Options{Shards: 3, Upstreams: 2})
	for i := range rs {
		r := rs[i]
		rec.Shard(i).Record(&r)
	}
	m := rec.Merge()
	m.Plan = stats.Plan{Shape: stats.Shape{Concurrency: 2, Requests: int64(len(rs))}, Target: stats.TargetInfo{URL: "fcgi://127.0.0.1:{9000..9001}/x", Protocol: "fcgi", Network: "tcp"}, Upstreams: []string{"tcp:127.0.0.1:9000", "tcp:127.0.0.1:9001"}, Method: "GET"}
	m.StartedAt, m.EndedAt, m.Elapsed = stats.Wall{start}, stats.Wall{end}, end.Sub(start)
	m.Environment = stats.CurrentEnvironment("test")
	return m
}

// TestMergeHalves: a run's requests split into two records and merged give
// the record of the whole run: equal counts, moments, causes and every
// percentile at HDR precision.
func TestMergeHalves(t *testing.T) {
	rs := results(5000)
	t0 := time.UnixMicro(1_764_556_800_123_456)
	whole := recordOf(rs, t0, t0.Add(2*time.Second))
	a := recordOf(rs[:1800], t0, t0.Add(time.Second))
	b := recordOf(rs[1800:], t0.Add(time.Second), t0.Add(2*time.Second))
	// The document length is the first response's; make both halves
	// agree with the whole (their first responses differ in length in no
	// way here, but say so).
	merged, err := stats.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if merged.Counts != whole.Counts {
		t.Errorf("counts\n%+v, want\n%+v", merged.Counts, whole.Counts)
	}
	if merged.Counts.Complete == 0 || merged.Counts.Failures[load.Connect] == 0 {
		t.Fatalf("the test's results have no variety: %+v", merged.Counts)
	}
	for p := range whole.Phases {
		w, m := &whole.Phases[p], &merged.Phases[p]
		if w.Moments != m.Moments {
			t.Errorf("%s moments %+v, want %+v", stats.Phase(p), m.Moments, w.Moments)
		}
		if !w.Histogram().Equals(m.Histogram()) {
			t.Errorf("%s histograms differ", stats.Phase(p))
		}
		for q := 0.0; q <= 100; q += 0.1 {
			if got, want := m.Quantile(q), w.Quantile(q); got != want {
				t.Fatalf("%s p%g = %v, want %v", stats.Phase(p), q, got, want)
			}
		}
	}
	for i := range whole.Upstreams {
		w, m := whole.Upstreams[i], merged.Upstreams[i]
		if w.Complete != m.Complete || w.Failed != m.Failed || w.Total.Moments != m.Total.Moments || !w.Total.Histogram().Equals(m.Total.Histogram()) {
			t.Errorf("upstream %d: %+v, want %+v", i, m, w)
		}
	}
	if !reflect.DeepEqual(merged.Causes, whole.Causes) {
		t.Errorf("causes %+v, want %+v", merged.Causes, whole.Causes)
	}
	if merged.CauseCount(load.KindRefused) != whole.Counts.Failures[load.Connect] || merged.CauseCount(load.KindReset) == 0 ||
		merged.CauseCount(load.KindTimeout) == 0 {
		t.Errorf("causes by kind %+v", merged.Causes)
	}
	if merged.Plan.Requests != 5000 || !merged.StartedAt.Equal(t0) || merged.Elapsed != 2*time.Second {
		t.Errorf("plan %+v start %v elapsed %v", merged.Plan, merged.StartedAt, merged.Elapsed)
	}
	ws, ms := stats.SummaryOf(whole), stats.SummaryOf(merged)
	if !reflect.DeepEqual(ws.Percentiles, ms.Percentiles) || ws.ConnectionTimes != ms.ConnectionTimes || ws.Failed != ms.Failed {
		t.Errorf("summaries differ:\n%+v\n%+v", ms, ws)
	}
}

// TestRecordJSONRoundTrip: a record written as JSON and read back is the
// same record: same counts, moments, histograms, times and summary.
func TestRecordJSONRoundTrip(t *testing.T) {
	t0 := time.UnixMicro(1_764_556_800_000_001)
	m := recordOf(results(3000), t0, t0.Add(1500*time.Millisecond))
	m.Environment.Command = []string{"backbench", "bench", "-n", "3000"}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"schema":1`, `"started_at":1764556800.000001`, `"ended_at":1764556801.500001`,
		`"hostname":`, `"kernel":`, `"cpu_model":`, `"cpus":`, `"version":"test"`, `"go_version":`,
		`"command":["backbench","bench","-n","3000"]`, `"histogram_us":"HIST`, `"kind":"refused"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
	var back stats.Record
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Counts != m.Counts || !back.StartedAt.Equal(m.StartedAt.Time) || !back.EndedAt.Equal(m.EndedAt.Time) ||
		back.Elapsed != m.Elapsed || !reflect.DeepEqual(back.Causes, m.Causes) || !reflect.DeepEqual(back.Plan, m.Plan) ||
		!reflect.DeepEqual(back.Environment, m.Environment) {
		t.Errorf("round trip changed the record:\n%+v\n%+v", back, *m)
	}
	for p := range m.Phases {
		if back.Phases[p].Moments != m.Phases[p].Moments || !back.Phases[p].Histogram().Equals(m.Phases[p].Histogram()) {
			t.Errorf("phase %s changed", stats.Phase(p))
		}
	}
	if !reflect.DeepEqual(stats.SummaryOf(&back), stats.SummaryOf(m)) {
		t.Errorf("summary changed:\n%+v\n%+v", stats.SummaryOf(&back), stats.SummaryOf(m))
	}
	// A merged copy of the read-back record is the record again.
	again, err := stats.Merge(&back)
	if err != nil || again.Counts != m.Counts {
		t.Errorf("merge of one: %v %+v", err, again)
	}
}

func TestMergeRefusesOtherPlans(t *testing.T) {
	a, b := recordOf(results(10), time.Now(), time.Now()), recordOf(results(10), time.Now(), time.Now())
	b.Plan.Method = "POST"
	if _, err := stats.Merge(a, b); err == nil {
		t.Error("records of different plans merged")
	}
}

func TestBadRecordJSON(t *testing.T) {
	for _, in := range []string{
		`{"started_at": "x"}`,
		`{"counts": {"failures": {"nope": 1}}}`,
		`{"phases": {"total": {"count": 1, "histogram_us": "garbage"}}}`,
		`{"phases": {"later": {}}}`,
		`{"phases": {"total": {"sum_squares_ns2": "-1"}}}`,
	} {
		var r stats.Record
		if err := json.Unmarshal([]byte(in), &r); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}

// TestHostileHistogram: a histogram whose header claims bounds backbench
// never writes (a huge range, many digits) is refused with an error before
// anything is allocated for it; the untouched encoding still reads.
func TestHostileHistogram(t *testing.T) {
	h := stats.NewHistogram()
	_ = h.RecordValue(1500)
	enc, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	// patch rewrites the 40-byte header inside the zlib stream.
	patch := func(f func(head []byte)) string {
		raw, _ := base64.StdEncoding.DecodeString(string(enc))
		z, err := zlib.NewReader(bytes.NewReader(raw[8:]))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := io.ReadAll(z)
		if err != nil {
			t.Fatal(err)
		}
		f(plain[:40])
		var buf bytes.Buffer
		w := zlib.NewWriter(&buf)
		_, _ = w.Write(plain)
		_ = w.Close()
		out := append(raw[:8:8], buf.Bytes()...)
		binary.BigEndian.PutUint32(out[4:8], uint32(buf.Len()))
		return base64.StdEncoding.EncodeToString(out)
	}
	doc := func(hist string) []byte {
		return []byte(`{"phases":{"total":{"count":1,"histogram_us":"` + hist + `"}}}`)
	}
	var r stats.Record
	if err := json.Unmarshal(doc(string(enc)), &r); err != nil {
		t.Fatalf("the untouched histogram: %v", err)
	}
	for name, f := range map[string]func([]byte){
		"huge range":  func(b []byte) { binary.BigEndian.PutUint64(b[24:32], 1<<62) },
		"many digits": func(b []byte) { binary.BigEndian.PutUint32(b[12:16], 5) },
		"lowest 0":    func(b []byte) { binary.BigEndian.PutUint64(b[16:24], 0) },
	} {
		var r stats.Record
		err := json.Unmarshal(doc(patch(f)), &r)
		if err == nil || !strings.Contains(err.Error(), "histogram bounds") {
			t.Errorf("%s: want a bounds error, got %v", name, err)
		}
	}
}

// FuzzRecordJSON: reading any bytes as a record never panics, and a record
// that was read writes back to JSON that reads as the same record.
func FuzzRecordJSON(f *testing.F) {
	t0 := time.UnixMicro(1_764_556_800_000_001)
	b, err := json.Marshal(recordOf(results(50), t0, t0.Add(time.Second)))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"schema":1,"started_at":-0.5,"phases":{"total":{"count":0,"sum_squares_ns2":"340282366920938463463374607431768211455"}}}`))
	f.Add([]byte(`{"counts":{"failures":{"connect":3}},"causes":[{"class":"connect","kind":"refused","count":3}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var r stats.Record
		if json.Unmarshal(in, &r) != nil {
			return
		}
		_ = stats.SummaryOf(&r)
		out, err := json.Marshal(&r)
		if err != nil {
			t.Fatalf("a record read back does not write: %v", err)
		}
		var again stats.Record
		if err := json.Unmarshal(out, &again); err != nil {
			t.Fatalf("written record does not read: %v\n%s", err, out)
		}
		out2, _ := json.Marshal(&again)
		if string(out) != string(out2) {
			t.Fatalf("round trip changed the record:\n%s\n%s", out, out2)
		}
	})
}

package stats

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/load"
)

// TestLatencyBuckets: every latency falls in a bucket whose bounds hold
// it, the buckets are in order, and a window's percentiles are within
// 12% of the exact order statistics.
func TestLatencyBuckets(t *testing.T) {
	for us := int64(0); us < 1<<20; us += 1 + us/50 {
		i := LatencyBucket(us * 1000)
		if us < bucketLow(i) || (i+1 < LatencyBuckets && us >= bucketLow(i+1)) {
			t.Fatalf("%d µs in bucket %d [%d, %d)", us, i, bucketLow(i), bucketLow(i+1))
		}
	}
	if i := LatencyBucket(int64(2 * time.Hour)); i != LatencyBuckets-1 {
		t.Errorf("2 h in bucket %d", i)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var w TimelineWindow
	var vals []float64
	for range 10000 {
		v := int64(rng.ExpFloat64()*4e6) + 50_000
		w.AddLatency(v)
		w.Complete++
		vals = append(vals, float64(v))
	}
	slices.Sort(vals)
	for _, q := range []float64{50, 90, 99} {
		exact := vals[int(float64(len(vals))*q/100)-1]
		got := float64(w.Latency(q))
		if got < exact*0.88 || got > exact*1.12 {
			t.Errorf("p%g = %.0f ns, exact %.0f", q, got, exact)
		}
	}
	if w.Latency(100) != w.LatencyMax || time.Duration(vals[len(vals)-1]) != w.LatencyMax {
		t.Errorf("max %v", w.LatencyMax)
	}
}

// TestTimelineJSON: a timeline is written with sparse histograms and read
// back as it was; a hostile window (a bucket out of range, an unknown
// class, negative counts, too many windows) is refused.
func TestTimelineJSON(t *testing.T) {
	tl := &Timeline{Start: Wall{time.UnixMicro(1764556800_123456)}, Width: 250 * time.Millisecond}
	tl.Cover(time.Second)
	w := &tl.Windows[1]
	w.Complete, w.BytesRead, w.Late = 3, 900, 1
	w.Failures[load.Timeout] = 2
	for _, v := range []int64{1e6, 2e6, 9e8} {
		w.AddLatency(v)
	}
	tl.Windows[2].Backend = &BackendSample{CPUSeconds: 0.25, PSSBytes: 1 << 20, Processes: 3, ListenQueued: -1}
	b, err := json.Marshal(tl)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"width_ns":250000000`, `"latency_buckets":[[`, `"failures":{"timeout":2}`, `"latency_max_ns":900000000`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("no %s in %s", key, b)
		}
	}
	var back Timeline
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, tl) {
		t.Errorf("read back\n%+v\nwant\n%+v", back, *tl)
	}
	for _, bad := range []string{
		`{"complete":1,"latency_buckets":[[124,1]]}`,
		`{"complete":1,"latency_buckets":[[-1,1]]}`,
		`{"complete":1,"latency_buckets":[[3,2]]}`,
		`{"complete":-1}`,
		`{"complete":1,"failures":{"ok":1}}`,
		`{"complete":1,"failures":{"timeout":-1}}`,
	} {
		var w TimelineWindow
		if err := json.Unmarshal([]byte(bad), &w); err == nil {
			t.Errorf("%s: read without an error", bad)
		}
	}
	big := &Timeline{Width: time.Second, Windows: make([]TimelineWindow, TimelineCap+1)}
	if big.Validate() == nil || (&Timeline{Windows: make([]TimelineWindow, 1)}).Validate() == nil {
		t.Error("Validate accepts too many windows or no width")
	}
}

// TestMergeTimelines: timelines merge on wall time: a later one's windows
// go where their start falls, an earlier one moves the start back by
// whole windows, a wider one coarsens the result, and the merge never
// holds more than TimelineCap windows.
func TestMergeTimelines(t *testing.T) {
	t0 := time.Unix(1764556800, 0)
	mk := func(start time.Time, width time.Duration, counts ...int64) *Timeline {
		tl := &Timeline{Start: Wall{start}, Width: width}
		for _, c := range counts {
			tl.Windows = append(tl.Windows, TimelineWindow{Complete: c})
		}
		return tl
	}
	complete := func(tl *Timeline) []int64 {
		var out []int64
		for _, w := range tl.Windows {
			out = append(out, w.Complete)
		}
		return out
	}
	a := mk(t0, time.Second, 1, 2, 3)
	m := MergeTimelines(nil, a)
	m = MergeTimelines(m, mk(t0.Add(2*time.Second), time.Second, 10, 20))
	if got := complete(m); !slices.Equal(got, []int64{1, 2, 13, 20}) {
		t.Errorf("a later timeline: %v", got)
	}
	if complete(a)[2] != 3 {
		t.Error("the merge changed its first input")
	}
	m = MergeTimelines(m, mk(t0.Add(-1500*time.Millisecond), time.Second, 100, 200))
	if got := complete(m); !slices.Equal(got, []int64{100, 200, 1, 2, 13, 20}) || !m.Start.Equal(t0.Add(-2*time.Second)) {
		t.Errorf("an earlier timeline: %v from %v", got, m.Start)
	}
	m = MergeTimelines(m, mk(t0.Add(-2*time.Second), 2*time.Second, 1000))
	if got := complete(m); !slices.Equal(got, []int64{1300, 3, 33}) || m.Width != 2*time.Second {
		t.Errorf("a wider timeline: %v of %v", got, m.Width)
	}
	far := MergeTimelines(mk(t0, time.Second, 1), mk(t0.Add(24*time.Hour), time.Second, 1))
	if len(far.Windows) > TimelineCap || far.Windows[0].Complete != 1 || far.Windows[len(far.Windows)-1].Complete != 1 {
		t.Errorf("a day apart: %d windows of %v", len(far.Windows), far.Width)
	}
}

// TestWindowFor: 1 s by default, halved for runs shorter than 20 s, the
// width asked for when one is.
func TestWindowFor(t *testing.T) {
	for _, c := range []struct{ span, want, got time.Duration }{
		{time.Minute, 0, time.Second},
		{20 * time.Second, 0, time.Second},
		{10 * time.Second, 0, 500 * time.Millisecond},
		{3 * time.Second, 0, 125 * time.Millisecond},
		{10 * time.Millisecond, 0, time.Millisecond},
		{0, 0, time.Second / 256},
		{time.Minute, 5 * time.Second, 5 * time.Second},
	} {
		if got := WindowFor(c.span, c.want); got != c.got {
			t.Errorf("WindowFor(%v, %v) = %v, want %v", c.span, c.want, got, c.got)
		}
	}
}

// TestMergeTimelinesFarApart: timelines of any start and width that
// Validate accepts merge without overflow or panic, bounded.
func TestMergeTimelinesFarApart(t *testing.T) {
	times := []time.Time{time.UnixMicro(0), time.UnixMicro(-1 << 62), time.UnixMicro(1 << 62), time.Unix(1764556800, 0)}
	widths := []time.Duration{1, time.Millisecond, MaxTimelineWidth}
	for _, a := range times {
		for _, b := range times {
			for _, wa := range widths {
				for _, wb := range widths {
					x := &Timeline{Start: Wall{a}, Width: wa, Windows: make([]TimelineWindow, 3)}
					y := &Timeline{Start: Wall{b}, Width: wb, Windows: make([]TimelineWindow, TimelineCap)}
					x.Windows[2].Complete, y.Windows[TimelineCap-1].Complete = 1, 1
					m := MergeTimelines(MergeTimelines(nil, x), y)
					var n int64
					for i := range m.Windows {
						n += m.Windows[i].Complete
					}
					if n != 2 || len(m.Windows) > TimelineCap || m.Width <= 0 {
						t.Errorf("%v/%v + %v/%v: %d requests in %d windows of %v", a, wa, b, wb, n, len(m.Windows), m.Width)
					}
				}
			}
		}
	}
}

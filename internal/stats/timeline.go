package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/backbench/backbench/internal/load"
)

// A run's timeline: what happened in each slice of its time, saved with
// the record ("timeline" in JSON) so that a warm-up, a stall or a leak can
// be seen where the whole-run figures hide it.
//
// Every request is placed by one moment: when it was due (open model) or
// sent (closed model), the same reference as Window's. Its outcome,
// bytes and latency all go to that window, so that a window's latency
// and failures are those of the requests it sent, and a stall shows in
// the window where it began (with no request sent in the windows it held
// in the closed model). Latencies are kept per window in a small
// histogram of LatencyBuckets log buckets (four per octave of
// microseconds: a percentile within about 12% of the value; the maximum
// is exact), which merges exactly by adding counts.
//
// Memory is bounded: a timeline holds at most TimelineCap windows; one
// that would hold more merges neighbouring windows in pairs and doubles
// its width (Coarsen).

// TimelineCap is the most windows a timeline holds.
const TimelineCap = 512

// LatencyBuckets is the number of buckets of a TimelineWindow's latency
// histogram: four per octave of microseconds, from 1 µs to over an hour.
const LatencyBuckets = 124

// DefaultWindow is the width of a timeline's windows for a run of 20 s or
// more; a shorter run gets a width of 1 s / 2ᵏ so that it has about
// MinWindows windows (WindowFor).
const DefaultWindow = time.Second

// MinWindows is how many windows WindowFor gives a run at least.
const MinWindows = 20

// WindowFor returns the window width of a run of time limit span (0: no
// time limit): want when it is set (> 0); otherwise DefaultWindow, halved
// until the run has at least MinWindows windows, not below a
// millisecond. A run without a time limit starts with DefaultWindow/256
// (its recorder doubles it as the run grows, up to DefaultWindow).
func WindowFor(span, want time.Duration) time.Duration {
	if want > 0 {
		return want
	}
	if span <= 0 {
		return DefaultWindow / 256
	}
	w := DefaultWindow
	for w > time.Millisecond && span/w < MinWindows {
		w /= 2
	}
	return max(w, time.Millisecond)
}

// Timeline is a run's windows: Windows[i] spans Width from Start + i·Width.
type Timeline struct {
	// Start is the wall-clock start of the first window (the run's start).
	Start Wall `json:"start"`
	// Width is the width of every window, in ns.
	Width time.Duration `json:"width_ns"`
	// Windows are in time order; a run's last windows may be empty.
	Windows []TimelineWindow `json:"windows"`
}

// TimelineWindow is what the requests placed in one window did.
type TimelineWindow struct {
	// Complete counts full responses (Length failures included, as the
	// record's Counts.Complete).
	Complete int64
	// Failures counts the failed requests by class.
	Failures ClassCounts
	// BytesRead is every byte read for the window's requests.
	BytesRead int64
	// Late counts the open model's requests sent more than
	// recorder.LateThreshold after their intended start.
	Late int64
	// LatencySum and LatencyMax are the sum and the maximum of the
	// complete requests' latencies, in ns (the corrected latency in the
	// open model, the total time in the closed).
	LatencySum time.Duration
	LatencyMax time.Duration
	// Buckets is the histogram of those latencies (LatencyBucket); nil
	// until the window's first latency, so that an empty window (most of
	// a merge's of runs far apart in time) costs no histogram.
	Buckets *[LatencyBuckets]int64
	// Backend is what the backend's sampling saw during the window; nil
	// when the backend was not sampled or no sample fell in it.
	Backend *BackendSample
}

// BackendSample is what the sampling of the backend saw during one
// window.
type BackendSample struct {
	// CPUSeconds is the CPU time the backend's processes used in the
	// window (user + system).
	CPUSeconds float64 `json:"cpu_seconds,omitempty"`
	// PSSBytes is the largest summed proportional set size of the
	// backend's process tree sampled in the window, in bytes.
	PSSBytes int64 `json:"pss_bytes,omitempty"`
	// Processes is the most processes of the tree sampled in the window;
	// 0 when its processes were not sampled (no backend PIDs), and then
	// CPUSeconds and PSSBytes are 0 too.
	Processes int `json:"processes,omitempty"`
	// ListenQueued is the longest accept queue of the target's listening
	// sockets sampled in the window; -1 when none was read.
	ListenQueued int `json:"listen_queued"`
}

// merge adds o, a sample of the same backend: CPU time adds, the rest
// keep the larger.
func (b *BackendSample) merge(o *BackendSample) {
	b.CPUSeconds += o.CPUSeconds
	b.PSSBytes = max(b.PSSBytes, o.PSSBytes)
	b.Processes = max(b.Processes, o.Processes)
	b.ListenQueued = max(b.ListenQueued, o.ListenQueued)
}

// LatencyBucket returns the bucket of a latency of ns nanoseconds.
func LatencyBucket(ns int64) int {
	us := max(ns/1000, 0)
	if us < 4 {
		return int(us)
	}
	o := bits.Len64(uint64(us)) - 1
	sub := int(us>>(o-2)) & 3
	return min(4*(o-1)+sub, LatencyBuckets-1)
}

// bucketLow returns the lowest latency of bucket i, in µs.
func bucketLow(i int) int64 {
	if i < 4 {
		return int64(i)
	}
	o := i/4 + 1
	return int64(4+i%4) << (o - 2)
}

// Failed returns the window's failed requests (every class).
func (w *TimelineWindow) Failed() int64 {
	var n int64
	for _, v := range w.Failures[1:] {
		n += v
	}
	return n
}

// AddLatency records the latency of one complete request, in ns.
func (w *TimelineWindow) AddLatency(ns int64) {
	w.LatencySum += time.Duration(ns)
	w.LatencyMax = max(w.LatencyMax, time.Duration(ns))
	if w.Buckets == nil {
		w.Buckets = new([LatencyBuckets]int64)
	}
	w.Buckets[LatencyBucket(ns)]++
}

// bucketCounts returns the window's histogram, all zeros when it has none.
func (w *TimelineWindow) bucketCounts() *[LatencyBuckets]int64 {
	if w.Buckets == nil {
		return &noBuckets
	}
	return w.Buckets
}

// noBuckets is the histogram of a window without latencies; never written.
var noBuckets [LatencyBuckets]int64

// Merge adds o to w, exactly.
func (w *TimelineWindow) Merge(o *TimelineWindow) {
	w.Complete += o.Complete
	w.Failures.Merge(&o.Failures)
	w.BytesRead += o.BytesRead
	w.Late += o.Late
	w.LatencySum += o.LatencySum
	w.LatencyMax = max(w.LatencyMax, o.LatencyMax)
	if o.Buckets != nil {
		if w.Buckets == nil {
			b := *o.Buckets
			w.Buckets = &b
		} else {
			for i, v := range o.Buckets {
				w.Buckets[i] += v
			}
		}
	}
	if o.Backend != nil {
		if w.Backend == nil {
			b := *o.Backend
			w.Backend = &b
		} else {
			w.Backend.merge(o.Backend)
		}
	}
}

// Latency returns the q-th percentile (0..100) of the window's latencies:
// the middle of the bucket that holds it, within the exact maximum; 0
// without a complete request. q >= 100 is the exact maximum.
func (w *TimelineWindow) Latency(q float64) time.Duration {
	var n int64
	for _, v := range w.bucketCounts() {
		n += v
	}
	if n == 0 {
		return 0
	}
	if q >= 100 {
		return w.LatencyMax
	}
	rank := max(int64(float64(n)*q/100+0.999999), 1)
	var seen int64
	for i, v := range w.bucketCounts() {
		seen += v
		if seen >= rank {
			lo, hi := bucketLow(i), bucketLow(i)+1
			if i+1 < LatencyBuckets {
				hi = bucketLow(i + 1)
			}
			mid := time.Duration((lo+hi)*1000) / 2
			return min(mid, w.LatencyMax)
		}
	}
	return w.LatencyMax
}

// MeanLatency returns the mean latency of the window's complete requests
// (0 without one).
func (w *TimelineWindow) MeanLatency() time.Duration {
	if w.Complete == 0 || w.LatencySum == 0 {
		return 0
	}
	var n int64
	for _, v := range w.bucketCounts() {
		n += v
	}
	if n == 0 {
		return 0
	}
	return w.LatencySum / time.Duration(n)
}

// windowJSON is a TimelineWindow's JSON form: the histogram sparse, as
// [bucket, count] pairs, with the percentiles derived for readers (not
// read back).
type windowJSON struct {
	Complete   int64            `json:"complete"`
	Failed     int64            `json:"failed"`
	Failures   map[string]int64 `json:"failures,omitempty"`
	BytesRead  int64            `json:"bytes_read"`
	Late       int64            `json:"late,omitempty"`
	P50        float64          `json:"latency_p50_ms"`
	P99        float64          `json:"latency_p99_ms"`
	LatencySum time.Duration    `json:"latency_sum_ns"`
	LatencyMax time.Duration    `json:"latency_max_ns"`
	Buckets    [][2]int64       `json:"latency_buckets"`
	Backend    *BackendSample   `json:"backend,omitempty"`
}

// MarshalJSON writes the window with its histogram sparse.
func (w TimelineWindow) MarshalJSON() ([]byte, error) {
	j := windowJSON{Complete: w.Complete, Failed: w.Failed(), BytesRead: w.BytesRead, Late: w.Late,
		P50: ms(w.Latency(50)), P99: ms(w.Latency(99)), LatencySum: w.LatencySum, LatencyMax: w.LatencyMax,
		Buckets: [][2]int64{}, Backend: w.Backend}
	for cl := load.ErrClass(1); cl < load.NumClasses; cl++ {
		if v := w.Failures[cl]; v != 0 {
			if j.Failures == nil {
				j.Failures = map[string]int64{}
			}
			j.Failures[cl.String()] = v
		}
	}
	for i, v := range w.bucketCounts() {
		if v != 0 {
			j.Buckets = append(j.Buckets, [2]int64{int64(i), v})
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes; a bucket out of range, an
// unknown class or a negative count is an error.
func (w *TimelineWindow) UnmarshalJSON(b []byte) error {
	var j windowJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*w = TimelineWindow{Complete: j.Complete, BytesRead: j.BytesRead, Late: j.Late, LatencySum: j.LatencySum,
		LatencyMax: j.LatencyMax, Backend: j.Backend}
	for k, v := range j.Failures {
		cl, ok := load.ParseErrClass(k)
		if !ok || cl == load.OK {
			return fmt.Errorf("stats: timeline: unknown failure class %q", k)
		}
		w.Failures[cl] = v
	}
	var n int64
	for _, p := range j.Buckets {
		if p[0] < 0 || p[0] >= LatencyBuckets || p[1] < 0 {
			return fmt.Errorf("stats: timeline: latency bucket %v out of range", p)
		}
		if p[1] == 0 {
			continue
		}
		if w.Buckets == nil {
			w.Buckets = new([LatencyBuckets]int64)
		}
		w.Buckets[p[0]] += p[1]
		n += p[1]
	}
	if w.Complete < 0 || w.BytesRead < 0 || w.Late < 0 || w.LatencySum < 0 || w.LatencyMax < 0 || n > w.Complete {
		return fmt.Errorf("stats: timeline: a window's counts are negative or disagree")
	}
	for _, v := range w.Failures {
		if v < 0 {
			return fmt.Errorf("stats: timeline: a negative failure count")
		}
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// Coarsen merges neighbouring windows in pairs and doubles the width.
func (t *Timeline) Coarsen() {
	n := (len(t.Windows) + 1) / 2
	for i := range n {
		w := t.Windows[2*i]
		if 2*i+1 < len(t.Windows) {
			w.Merge(&t.Windows[2*i+1])
		}
		t.Windows[i] = w
	}
	clear(t.Windows[n:])
	t.Windows = t.Windows[:n]
	t.Width *= 2
}

// CoarsenTo coarsens t until its width is at least w (widths that are t's
// times a power of two end equal).
func (t *Timeline) CoarsenTo(w time.Duration) {
	for t.Width > 0 && t.Width < w {
		t.Coarsen()
	}
}

// Cover adds empty windows so that the timeline spans d from its start.
func (t *Timeline) Cover(d time.Duration) {
	if t.Width <= 0 {
		return
	}
	n := ceilDiv(d, t.Width)
	for n > TimelineCap {
		t.Coarsen()
		n = ceilDiv(d, t.Width)
	}
	for len(t.Windows) < n {
		t.Windows = append(t.Windows, TimelineWindow{})
	}
}

// ceilDiv returns ⌈d / w⌉ for d >= 0 and w > 0, without overflow.
func ceilDiv(d, w time.Duration) int {
	n := d / w
	if d%w != 0 {
		n++
	}
	return int(n)
}

// addSat adds two non-negative durations, saturating at the largest.
func addSat(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// MaxTimelineWidth bounds the width of a timeline read from a file (about
// 417 days: the width of a merge of records a few centuries apart).
const MaxTimelineWidth = time.Duration(1) << 55

// Span returns the time the windows cover.
func (t *Timeline) Span() time.Duration { return mulSat(t.Width, len(t.Windows)) }

// mulSat returns w·n for w, n >= 0, saturating at the largest duration.
func mulSat(w time.Duration, n int) time.Duration {
	if n > 0 && w > math.MaxInt64/time.Duration(n) {
		return math.MaxInt64
	}
	return w * time.Duration(n)
}

// Clone returns a deep copy of t.
func (t *Timeline) Clone() *Timeline {
	c := *t
	c.Windows = slices.Clone(t.Windows)
	for i := range c.Windows {
		if b := c.Windows[i].Backend; b != nil {
			bb := *b
			c.Windows[i].Backend = &bb
		}
		if b := c.Windows[i].Buckets; b != nil {
			bb := *b
			c.Windows[i].Buckets = &bb
		}
	}
	return &c
}

// MergeTimelines adds timeline o into t (nil t: a copy of o), aligned on
// wall time: the result starts at t's start, moved back by whole windows
// when o starts earlier, and has the wider width of the two (coarsened
// until it is at least o's); each of o's windows goes, whole, to the
// result's window that holds its start. Timelines of the same start and
// of widths that differ by a power of two merge exactly; others within
// a window's edge.
func MergeTimelines(t, o *Timeline) *Timeline {
	if o == nil || o.Width <= 0 {
		return t
	}
	if t == nil || t.Width <= 0 {
		return o.Clone()
	}
	t.CoarsenTo(o.Width)
	if d := t.Start.Sub(o.Start.Time); d > 0 {
		k := ceilDiv(d, t.Width)
		for k > TimelineCap-len(t.Windows) {
			t.Coarsen()
			k = ceilDiv(d, t.Width)
		}
		t.Windows = append(make([]TimelineWindow, k, k+len(t.Windows)), t.Windows...)
		t.Start = Wall{t.Start.Add(-time.Duration(k-1) * t.Width).Add(-t.Width)}
	}
	off := max(o.Start.Sub(t.Start.Time), 0)
	t.Cover(addSat(off, o.Span()))
	for i := range o.Windows {
		at := addSat(off, mulSat(o.Width, i))
		j := min(int(at/t.Width), len(t.Windows)-1)
		t.Windows[j].Merge(&o.Windows[i])
	}
	return t
}

// Validate checks a timeline read from a file: a positive width with
// windows, and at most TimelineCap of them.
func (t *Timeline) Validate() error {
	switch {
	case len(t.Windows) > TimelineCap:
		return fmt.Errorf("timeline: %d windows, more than the %d a timeline holds", len(t.Windows), TimelineCap)
	case t.Width <= 0 && len(t.Windows) > 0:
		return fmt.Errorf("timeline.width_ns is %d: want a positive width", t.Width)
	case t.Width > MaxTimelineWidth:
		return fmt.Errorf("timeline.width_ns is %d: at most %d", t.Width, MaxTimelineWidth)
	}
	return nil
}

// Worst returns the index of the window whose p99 latency is the highest
// among windows with complete requests, the median of those windows'
// p99, and whether there were at least 3 such windows.
func (t *Timeline) Worst() (worst int, median time.Duration, ok bool) {
	var p99s []time.Duration
	worst = -1
	var top time.Duration
	for i := range t.Windows {
		w := &t.Windows[i]
		if w.Complete == 0 {
			continue
		}
		v := w.Latency(99)
		p99s = append(p99s, v)
		if worst < 0 || v > top {
			worst, top = i, v
		}
	}
	if len(p99s) < 3 {
		return worst, 0, false
	}
	slices.Sort(p99s)
	return worst, p99s[len(p99s)/2], true
}

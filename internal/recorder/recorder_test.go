package recorder

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/stats"
)

// ok returns a completed result whose total time is total ns.
func ok(start, total, body int64) load.Result {
	return load.Result{Class: load.OK, Status: 200, Start: start, Connected: start, Written: start + total/4,
		FirstByte: start + total/2, Done: start + total, BodyBytes: body, BytesRead: body + 100}
}

func TestCountsAndLengthRule(t *testing.T) {
	for _, variable := range []bool{false, true} {
		rec := New(Options{Shards: 3, VariableLength: variable})
		results := []load.Result{
			ok(10, 1e6, 5),
			ok(20, 2e6, 5),
			ok(30, 3e6, 7), // Length failure unless variable
			{Class: load.Connect, Err: errors.New("connect: connection refused"), Start: 40, Done: 50},
			{Class: load.Timeout, Err: errors.New("timeout"), Start: 40, Done: 50},
			{Class: load.Protocol, Err: errors.New("bad version"), Start: 40, Done: 50},
		}
		results[1].Status = 404
		results[0].KeepAlive = true
		for i := range results {
			rec.Shard(i).Record(&results[i])
		}
		s := summarize(rec.Merge(), stats.Plan{Shape: stats.Shape{Concurrency: 3}}, 1e9)
		wantLength := int64(1)
		if variable {
			wantLength = 0
		}
		if s.Complete != 3 || s.Failed != 3+wantLength || s.Failures.Length != wantLength {
			t.Errorf("variable=%v: complete %d failed %d length %d", variable, s.Complete, s.Failed, s.Failures.Length)
		}
		if s.Failures.Connect != 1 || s.Failures.Timeout != 1 || s.Failures.Protocol != 1 {
			t.Errorf("failures %+v", s.Failures)
		}
		if s.Non2xx != 1 || s.KeepAliveRequests != 1 || s.DocumentLength != 5 {
			t.Errorf("non2xx %d keepalive %d doclen %d", s.Non2xx, s.KeepAliveRequests, s.DocumentLength)
		}
		if s.HTMLTransferred != 17 || s.TotalTransferred != 317 {
			t.Errorf("html %d total %d", s.HTMLTransferred, s.TotalTransferred)
		}
		if len(s.ErrorSamples) != 3 {
			t.Errorf("error samples %v", s.ErrorSamples)
		}
		if s.RequestsPerSecond != 3 || s.TimePerRequest != 1000 {
			t.Errorf("rps %v tpr %v", s.RequestsPerSecond, s.TimePerRequest)
		}
	}
}

// TestPercentilesAndMoments checks HDR percentiles against the exact order
// statistics (within 0.1% plus 1 µs) and the exact mean and sample sd.
func TestPercentilesAndMoments(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rec := New(Options{Shards: 8})
	var totals []float64
	for i := range 20000 {
		total := int64(rng.ExpFloat64()*5e6) + 100_000 // ns
		r := ok(int64(i), total, 10)
		r.Dialed = true
		r.Connected = r.Start + total/10
		rec.Shard(i).Record(&r)
		totals = append(totals, float64(total)/1e6)
	}
	m := rec.Merge()
	s := summarize(m, stats.Plan{Shape: stats.Shape{Concurrency: 8}}, 2e9)
	sort.Float64s(totals)
	for _, p := range stats.Percentiles {
		idx := int(math.Ceil(float64(p)/100*float64(len(totals)))) - 1
		want := totals[idx]
		got := s.Percentiles[itoa(p)]
		if math.Abs(got-want) > want*0.001+0.001 {
			t.Errorf("p%d = %v, want %v", p, got, want)
		}
	}
	var sum, sumsq float64
	for _, v := range totals {
		sum += v
	}
	mean := sum / float64(len(totals))
	for _, v := range totals {
		sumsq += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(sumsq / float64(len(totals)-1))
	tt := s.ConnectionTimes.Total
	if math.Abs(tt.Mean-mean) > 1e-6 || math.Abs(tt.SD-sd) > 1e-6 || tt.Min != totals[0] || tt.Max != totals[len(totals)-1] {
		t.Errorf("total %+v, want mean %v sd %v min %v max %v", tt, mean, sd, totals[0], totals[len(totals)-1])
	}
	c := s.ConnectionTimes
	if math.Abs(c.Connect.Mean+c.Processing.Mean-c.Total.Mean) > 1e-6 {
		t.Errorf("connect %v + processing %v != total %v", c.Connect.Mean, c.Processing.Mean, c.Total.Mean)
	}
	if sp := stats.PercentileSpectrum(m); len(sp) != 101 || sp[0] != totals[0] || sp[100] != totals[len(totals)-1] {
		t.Errorf("spectrum ends %v %v", sp[0], sp[100])
	}
}

func TestConnectOnlyWhenDialed(t *testing.T) {
	rec := New(Options{Shards: 1, KeepRows: true})
	r := ok(0, 4e6, 1)
	r.Connected = 3e6 // not dialed: must be ignored
	rec.Shard(0).Record(&r)
	m := rec.Merge()
	s := summarize(m, stats.Plan{}, 1)
	if s.ConnectionTimes.Connect.Max != 0 || s.ConnectionTimes.Processing.Max != 4 {
		t.Errorf("%+v", s.ConnectionTimes)
	}
	if rows := m.Rows(); len(rows) != 1 || rows[0].Total != 4e6 || rows[0].Waiting != 1e6 {
		t.Errorf("rows %+v", rows)
	}
}

func TestErrorSamplesBounded(t *testing.T) {
	rec := New(Options{Shards: 2})
	for i := range 100 {
		r := load.Result{Class: load.Receive, Err: errors.New("e" + itoa(i%20))}
		rec.Shard(i).Record(&r)
	}
	s := summarize(rec.Merge(), stats.Plan{}, 0)
	if len(s.ErrorSamples) != stats.MaxErrorSamples || s.Failures.Receive != 100 {
		t.Errorf("%d samples, %d receive", len(s.ErrorSamples), s.Failures.Receive)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestRecordDoesNotAllocate(t *testing.T) {
	for _, o := range []Options{{Shards: 4}, {Shards: 4, Windows: 10, Span: time.Second}, {Shards: 16, Targets: 1000}} {
		rec := New(o)
		rec.Begin(0)
		r := ok(1, 2e6, 10)
		r.Server = []byte("srv")
		sh := rec.Shard(0)
		sh.Record(&r)
		k := 0
		if n := testing.AllocsPerRun(1000, func() {
			if o.Targets > 0 {
				r.Target = k % o.Targets
				k += 7
			}
			sh.Record(&r)
		}); n != 0 {
			t.Errorf("%+v: stats.Record allocates %v times per call", o, n)
		}
	}
}

// TestWindows: with Options.Windows, each completed request counts in the
// window of its intended start (open model) or its start (closed), with
// its latency from that time, and every finished request in the window of
// its end; times outside the span fall in the first or the last window;
// shards add up; without Windows the record has none.
func TestWindows(t *testing.T) {
	const ms = int64(time.Millisecond)
	origin := int64(5_000 * ms)
	rec := New(Options{Shards: 2, Windows: 4, Span: 400 * time.Millisecond})
	rec.Begin(origin)
	closed := ok(origin+10*ms, 20*ms, 5) // due 10 ms, done 30 ms: window 0
	rec.Shard(0).Record(&closed)
	open := ok(origin+150*ms, 200*ms, 5) // sent 150, done 350: window 3
	open.Intended = origin + 120*ms      // due 120: window 1, latency 230 ms
	rec.Shard(1).Record(&open)
	failed := load.Result{Class: load.Timeout, Start: origin + 390*ms, Done: origin + 900*ms} // after the span
	rec.Shard(1).Record(&failed)
	early := ok(origin-5*ms, 1*ms, 5) // before Begin: window 0
	rec.Shard(0).Record(&early)
	m := rec.Merge()
	want := []stats.Window{{Started: 2, LatencySum: 21 * ms, Finished: 2}, {Started: 1, LatencySum: 230 * ms}, {}, {Finished: 2}}
	if m.WindowWidth != 100*time.Millisecond || len(m.Windows) != 4 {
		t.Fatalf("windows %+v width %v", m.Windows, m.WindowWidth)
	}
	for i := range want {
		if m.Windows[i] != want[i] {
			t.Errorf("window %d = %+v, want %+v", i, m.Windows[i], want[i])
		}
	}
	if m.Windows[1].MeanLatency() != 230 || (stats.Window{}).MeanLatency() != 0 {
		t.Errorf("mean latency %g", m.Windows[1].MeanLatency())
	}
	if r := New(Options{Shards: 1}).Merge(); r.Windows != nil {
		t.Errorf("windows without Options.Windows: %+v", r.Windows)
	}
}

// BenchmarkRecord records from parallel goroutines into one shard (the
// shard lock contended).
func BenchmarkRecord(b *testing.B) {
	rec := New(Options{Shards: 4})
	r := ok(1, 2e6, 10)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		sh := rec.Shard(0)
		rr := r
		for pb.Next() {
			sh.Record(&rr)
		}
	})
}

// BenchmarkRecordShardPerWorker records from parallel goroutines, each into
// a shard of its own, as the runners' workers do: what is left shared
// between them (the recorder's fields, neighbouring shards' cache lines)
// shows here.
func BenchmarkRecordShardPerWorker(b *testing.B) {
	rec := New(Options{Shards: 16})
	var next atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		sh := rec.Shard(int(next.Add(1)-1) % 16)
		rr := ok(1, 2e6, 10)
		for pb.Next() {
			sh.Record(&rr)
		}
	})
}

// summarize derives m's stats.Summary under plan p and an elapsed time.
func summarize(m *stats.Record, p stats.Plan, elapsed time.Duration) stats.Summary {
	p.VariableLength = m.Plan.VariableLength
	m.Plan, m.Elapsed = p, elapsed
	return stats.SummaryOf(m)
}

// TestClientLateness: in the open model, the lateness of requests whose
// worker was free (not Queued) is the client's own; when its p99 is over a
// tenth of the corrected p99 a warning says so. Queued requests and the
// unsent ones do not enter it; the unsent enter the corrected latencies.
func TestClientLateness(t *testing.T) {
	for _, tc := range []struct {
		name     string
		late     int64 // ns, of every free-worker request
		total    int64 // ns
		wantWarn bool
	}{{"precise client", 10_000, 2_000_000, false}, {"late client", 800_000, 1_000_000, true}} {
		t.Run(tc.name, func(t *testing.T) {
			rec := New(Options{Shards: 2})
			for i := range int64(100) {
				intended := 1_000_000_000 + i*1_000_000
				r := ok(intended+tc.late, tc.total, 10)
				r.Intended = intended
				if i%10 == 9 { // waited 5 ms for a worker: not the client's lateness
					r = ok(intended+5_000_000, tc.total, 10)
					r.Intended, r.Queued = intended, true
				}
				rec.Shard(int(i)).Record(&r)
			}
			rec.RecordUnsent(3_000_000_000)
			m := rec.Merge()
			if n := m.PhaseCount(stats.PhaseScheduled); n != 101 {
				t.Errorf("corrected latencies hold %d, want 100 + 1 unsent", n)
			}
			m.Counts.Due, m.Counts.Unsent = 101, 1
			s := summarize(m, stats.Plan{Shape: stats.Shape{Rate: 1000}}, 0)
			l := s.Open.ClientLatenessMs
			want := float64(tc.late) / 1e6
			if l == nil || math.Abs(l.P50-want) > want*0.01+0.001 || math.Abs(l.Max-want) > want*0.01+0.001 {
				t.Fatalf("client lateness %+v, want %.3f ms", l, want)
			}
			if s.Open.DueRequests != 101 || s.Open.UnsentRequests != 1 || s.Percentiles["100"] != 3000 {
				t.Errorf("open %+v, corrected max %.1f ms", *s.Open, s.Percentiles["100"])
			}
			if got := len(s.Client.Warnings) == 1; got != tc.wantWarn {
				t.Errorf("warnings %q, want one: %v", s.Client.Warnings, tc.wantWarn)
			}
		})
	}
}

// TestTargetsMergeExactly: the per-target parts of a mix add up over the
// shards (and the outcomes they still hold, not yet added to the mix's
// parts) to the run's counts, each target's latencies in its own
// histogram.
func TestTargetsMergeExactly(t *testing.T) {
	for _, n := range []int{3, 1000} {
		rec := New(Options{Shards: 16, Targets: n})
		rec.Begin(0)
		want := make([]int64, n)
		for i := range 20000 {
			r := ok(int64(i), int64(1+i%n)*1e6, 5) // target k takes k+1 ms
			r.Target = i % n
			if i%97 == 0 {
				r.Class, r.Err = load.Receive, errors.New("cut")
			}
			want[r.Target]++
			rec.Shard(i).Record(&r)
		}
		m := rec.Merge()
		if len(m.Targets) != n {
			t.Fatalf("%d targets: %d parts", n, len(m.Targets))
		}
		var sum int64
		for k, tr := range m.Targets {
			sum += tr.Requests
			if tr.Requests != want[k] || tr.Complete+tr.Failed != tr.Requests || tr.Total.N != tr.Complete {
				t.Fatalf("%d targets: target %d: %+v, want %d requests", n, k, tr, want[k])
			}
			if tr.Complete > 0 {
				if p := tr.Total.ValueAt(50); p < int64(k+1)*990 || p > int64(k+1)*1010 {
					t.Fatalf("%d targets: target %d: p50 %d us, want %d ms", n, k, p, k+1)
				}
			}
		}
		if sum != m.Counts.Complete+m.Counts.Failed() {
			t.Errorf("%d targets: %d requests over the targets, %d in the run", n, sum, m.Counts.Complete+m.Counts.Failed())
		}
	}
}

// TestBucketsAreHDRs: a target's counts are those of an hdrhistogram of
// the targets' geometry: as many, each latency counted at the index of the
// least value of its bucket there, and each index the bucket of that value.
func TestBucketsAreHDRs(t *testing.T) {
	h := hdr.New(stats.HistMin, stats.HistMax, stats.TargetSigFigs)
	if got := len(h.Export().Counts); got != targetBuckets {
		t.Fatalf("hdrhistogram has %d counts, targetBuckets says %d", got, targetBuckets)
	}
	for i := range bucketOf(stats.HistMax*1000) + 1 { // the buckets past HistMax are not used
		if got := bucketOf(bucketValue(i) * 1000); got != i {
			t.Fatalf("bucket %d: least value %d µs, whose bucket is %d", i, bucketValue(i), got)
		}
	}
	us := []int64{stats.HistMax, stats.HistMax - 1}
	for v := range int64(1 << 16) {
		us = append(us, v)
	}
	for b := range 32 {
		for d := int64(-2); d <= 2; d++ {
			us = append(us, int64(1)<<b+d)
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 100000 {
		us = append(us, rng.Int64N(stats.HistMax+1))
	}
	for _, v := range us {
		if v < 0 {
			continue
		}
		i := bucketOf(v*1000 + 999)
		lv := bucketValue(i)
		if i < 0 || i >= targetBuckets || lv > v || !h.ValuesAreEquivalent(v, lv) {
			t.Fatalf("%d µs: bucket %d, least value %d µs (hdrhistogram: equivalent %v)", v, i, lv, h.ValuesAreEquivalent(v, lv))
		}
	}
	if bucketOf(-5) != 0 || bucketOf(math.MaxInt64) != bucketOf(stats.HistMax*1000) {
		t.Errorf("out of range: %d, %d", bucketOf(-5), bucketOf(math.MaxInt64))
	}
}

// TestTargetHistogramsExact: each target's histogram, over shards and
// their pending outcomes, holds what an hdrhistogram of its latencies
// holds, count for count, and its moments are exact.
func TestTargetHistogramsExact(t *testing.T) {
	const n = 5
	rng := rand.New(rand.NewPCG(7, 8))
	rec := New(Options{Shards: 4, Targets: n})
	want := make([]*hdr.Histogram, n)
	var sum [n]int64
	for k := range want {
		want[k] = hdr.New(stats.HistMin, stats.HistMax, stats.TargetSigFigs)
	}
	for i := range 5000 { // not a multiple of the shards' pending buffers
		k := rng.IntN(n)
		total := int64(rng.ExpFloat64()*float64(int64(k+1)*3e6)) + 1000
		r := ok(int64(i), total, 5)
		r.Target = k
		rec.Shard(i).Record(&r)
		_ = want[k].RecordValue(total / 1000)
		sum[k] += total
	}
	m := rec.Merge()
	for k, tr := range m.Targets {
		got := tr.Total.Histogram()
		if !got.Equals(want[k]) || tr.Total.N != want[k].TotalCount() || int64(tr.Total.Sum) != sum[k] {
			t.Errorf("target %d: %d values, sum %d; want %d, %d; histograms equal: %v",
				k, tr.Total.N, tr.Total.Sum, want[k].TotalCount(), sum[k], got.Equals(want[k]))
		}
		if got.SignificantFigures() != stats.TargetSigFigs {
			t.Errorf("target %d: %d digits", k, got.SignificantFigures())
		}
	}
	if again := rec.Merge(); again.Targets[0].Total.N != m.Targets[0].Total.N {
		t.Errorf("a second merge: %d values, the first %d", again.Targets[0].Total.N, m.Targets[0].Total.N)
	}
}

// TestTargetCountWraps: a target's count of one bucket past 2^32 - 1
// (2^32 requests of one target in one bucket) is kept whole.
func TestTargetCountWraps(t *testing.T) {
	rec := New(Options{Shards: 2, Targets: 3})
	rec.mix.counts[bucketOf(5e6)*3+1] = math.MaxUint32 - 1 // as if 2^32 - 2 had been counted
	r := ok(0, 5e6, 1)
	r.Target = 1
	for i := range 4 { // the second wraps the count to 0
		rec.Shard(i).Record(&r)
	}
	h := hdr.New(stats.HistMin, stats.HistMax, stats.TargetSigFigs)
	got := rec.Merge().Targets[1].Total.Histogram()
	if want := int64(1)<<32 + 2; got.TotalCount() != want || !h.ValuesAreEquivalent(got.Min(), 5000) || !h.ValuesAreEquivalent(got.Max(), 5000) {
		t.Errorf("%d values from %d to %d µs; want %d, at 5000", got.TotalCount(), got.Min(), got.Max(), want)
	}
}

// TestLengthPerTarget: in a mix, each target has its own document
// length; a length that differs within one target is a Length failure.
func TestLengthPerTarget(t *testing.T) {
	r := New(Options{Shards: 1, Targets: 2})
	s := r.Shard(0)
	for i, c := range []struct {
		target int
		bytes  int64
		want   load.ErrClass
	}{{0, 10, load.OK}, {1, 0, load.OK}, {0, 10, load.OK}, {1, 0, load.OK}, {1, 5, load.Length}} {
		res := load.Result{Class: load.OK, Target: c.target, BodyBytes: c.bytes, Start: 1, Done: 2}
		s.Record(&res)
		if res.Class != c.want {
			t.Errorf("%d: class %v, want %v", i, res.Class, c.want)
		}
	}
	if m := r.Merge(); m.DocumentLength != 10 {
		t.Errorf("document length %d, want the first response's 10", m.DocumentLength)
	}
}

// cpuTime returns the CPU time the process has used (user and system), in
// ns: on a shared machine, a benchmark's cost is better read from it than
// from the wall clock.
func cpuTime() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkRecordTargets compares recording into a run of one target (no
// per-target parts) with recording into a mix of 1,000 targets, as the
// runners' workers do (10 workers, a shard each, as at -c 10), with the
// same latencies (50 µs plus an exponential of mean 100 µs) and targets
// picked by a weighted schedule (weights 1 to 3 in turn, as the bench
// harness's mix). Compare the two cpu-ns/op (the process's CPU time per
// request; ns/op is the wall clock's) of one run, and their ratio from one
// change to the next, never the figures of two runs: on a shared machine
// only the ratio of neighbouring runs means something.
func BenchmarkRecordTargets(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	lats := make([]int64, 1<<14)
	for i := range lats {
		lats[i] = 50_000 + int64(rng.ExpFloat64()*100_000)
	}
	for _, n := range []int{1, 1000} {
		var sched []int
		for k := range n {
			for range 1 + k%3 {
				sched = append(sched, k)
			}
		}
		rng.Shuffle(len(sched), func(i, j int) { sched[i], sched[j] = sched[j], sched[i] })
		b.Run("targets="+strconv.Itoa(n), func(b *testing.B) {
			const workers = 10
			rec := New(Options{Shards: workers, Targets: n})
			rec.Begin(0)
			var next atomic.Int64
			b.SetParallelism((workers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			b.ReportAllocs()
			cpu0 := cpuTime()
			b.ResetTimer()
			defer func() { b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op") }()
			b.RunParallel(func(pb *testing.PB) {
				w := int(next.Add(1) - 1)
				sh := rec.Shard(w)
				i := w * 7919
				for pb.Next() {
					r := ok(int64(i), lats[i%len(lats)], 512)
					if n > 1 {
						r.Target = sched[i%len(sched)]
					}
					sh.Record(&r)
					i++
				}
			})
		})
	}
}

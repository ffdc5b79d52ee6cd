// Package recorder is the hot path of a run's statistics: the workers
// record the outcome of every request into a Recorder (Shard.Record, under
// a short lock of the shard a worker is given, with no allocation per
// request), and after the run Merge turns the shards into the run's
// stats.Record. It also keeps the run's timeline (stats.Timeline: counts,
// failures, bytes and a small latency histogram per window, bounded in
// memory), streams the --raw CSV lines and, for capacity's steady-state
// test, counts requests per window of the run's time.
//
// Latencies go into HDR histograms (github.com/HdrHistogram/hdrhistogram-go)
// with 3 significant digits (percentiles within 0.1% of the value) from 1 µs
// to 1 hour, one set per shard, merged after the run; memory does not grow
// with the request count. Exact count, min, max, mean and standard deviation
// are kept beside the histograms. Workers record into a shard under a short
// lock; a run has at most MaxShards shards, so the histogram memory stays a
// few MiB whatever the concurrency.
//
// A mix of targets (Options.Targets) keeps, per target, its counts, body
// bytes, and the exact moments and an HDR histogram (stats.TargetSigFigs
// digits) of its total times. A shard notes each outcome in a small buffer
// of its own, under the lock it already holds, and adds the buffer to the
// run's one set of per-target parts (mixParts) under one short lock every
// pendingCap requests; that set lays its latency counts out bucket by
// bucket, so that the ones a run uses stay in a few contiguous rows
// whatever the number of targets. A set per shard would take 13 MB per
// shard at 1,000 targets; a histogram per target, one set shared by
// shards under a lock, took a contended lock and a cache miss or more per
// request (BenchmarkRecordTargets compares a mix of 1,000 with one).
//
// The Length rule is ab's: the body length of the first completed response
// is the document length, and a later completed response whose body length
// differs is a Length failure (still counted complete) unless the length is
// declared variable. In a mix of targets the rule holds per target: each
// target's first completed response sets its own length.
//
// Not here: the record itself, its JSON form and its merge of saved
// records, and ab's figures derived from a record (package stats:
// stats.SummaryOf). A recorder knows nothing of plans, files or reports.
package recorder

import (
	"io"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/stats"
)

// MaxShards bounds the number of shards of a Recorder.
const MaxShards = 16

// LateThreshold is how far after its intended time a request must be sent
// to count as late in the open model, in nanoseconds.
const LateThreshold = time.Millisecond

// Shard is the part of a Recorder that a group of workers records into.
type Shard struct {
	mu     sync.Mutex
	phases stats.Phases
	counts stats.Counts
	causes [load.NumClasses][load.NumKinds]causeSlot
	rows   []stats.RawRow
	keep   bool
	raw    []byte // pending --raw lines
	ups    []stats.UpstreamRecord
	rec    *Recorder
	win    []stats.Window // per slice of the run's time, when Options.Windows asks
	tl     stats.Timeline // the shard's part of the run's timeline (Width, Windows)
	tp     []pending      // this shard's outcomes not yet added to the mix's parts (Options.Targets)
	done   atomic.Int64   // requests recorded, for progress
	failed atomic.Int64   // failed requests recorded, for progress
	_      [64]byte       // keeps the next shard's lock off this one's cache lines
}

// pending is the outcome of one request of a mix, kept by its shard until
// the shard adds its last pendingCap of them to the mix's parts (mixParts).
type pending struct {
	target int32
	flags  uint8 // pendingComplete, pendingFailed
	total  int64 // total time of a complete request, in ns
	body   int64 // body bytes of a complete request
}

const (
	pendingComplete = 1 << iota
	pendingFailed
)

// pendingCap is how many outcomes a shard keeps before it adds them to the
// mix's parts: the mix's lock is taken once per pendingCap requests, and
// the buffer (24 bytes each) stays in the shard's cache.
const pendingCap = 256

// mixParts holds the per-target parts of a mix (Options.Targets), one set
// for the whole run, which the shards add their pending outcomes to under
// its lock. The targets' latencies are counted in one flat table, in the
// buckets of an hdrhistogram of stats.TargetSigFigs digits (bucketOf),
// bucket by bucket: the counts of one bucket for every target side by
// side, so that the buckets a run's latencies fall in are a few
// contiguous rows for all its targets (at 1,000 targets, a page per bucket
// used, where a table target by target, or a histogram per target, would
// spread them over a page or two per target: at 4 KiB pages, the
// processor's address cache then misses on nearly every request). Never
// read on the hot path, the table is made sparse histograms once, by
// Merge.
type mixParts struct {
	mu     sync.Mutex
	tally  []targetTally
	counts []uint32      // counts[bucket*len(tally)+target]
	carry  map[int]int64 // multiples of 2^32 of the counts that wrapped, by index
}

// targetTally is what a mix's part holds of one target beside its
// latencies' counts; total.N counts its complete requests.
type targetTally struct {
	requests, failed, body int64
	total                  stats.Moments
}

// causeSlot counts the failures of one class and kind.
type causeSlot struct {
	n   int64
	msg string
}

// Recorder collects the results of one run.
type Recorder struct {
	shards   []*Shard
	variable bool
	docLen   atomic.Int64 // -1 until the first completed response
	// docLens, in a mix of targets, holds each target's document length
	// (-1 until its first completed response): ab's Length rule holds
	// per target, since the pages of a mix differ in length.
	docLens []atomic.Int64
	server  atomic.Pointer[string]
	mix     *mixParts              // nil unless Options.Targets > 1
	stderr  atomic.Pointer[string] // first line of the first FastCGI STDERR sample

	errMu   sync.Mutex
	errSeen map[string]int64

	rawMu  sync.Mutex
	rawW   io.Writer
	rawErr error

	// origin and width place a time in a window (Options.Windows): set
	// by Begin before any worker records, read-only after.
	origin, width int64
	// begun holds origin+1 once Begin has run (0 before), for Recent,
	// which runs beside Begin; the hot path reads origin.
	begun atomic.Int64
	// growTo is the width up to which a shard's timeline doubles its
	// width past 2·stats.MinWindows windows (a run of unknown length).
	growTo time.Duration
}

// Options configures a Recorder.
type Options struct {
	// Shards is the number of shards, usually the concurrency; it is
	// capped at MaxShards.
	Shards int
	// VariableLength turns the Length rule off (ab's -l).
	VariableLength bool
	// KeepRows keeps one stats.RawRow per completed request (for ab's -g file
	// and --ab-compat); memory then grows with the request count.
	KeepRows bool
	// Raw, when not nil, receives one CSV line per request (see
	// RawHeader), streamed in blocks of whole lines as the run goes.
	Raw io.Writer
	// Upstreams, when > 1, keeps counts and latencies per upstream
	// address (load.Result.Upstream) of a cluster target.
	Upstreams int
	// Targets, when > 1, keeps counts, body bytes and latencies per
	// request of a mix (load.Result.Target), preallocated here.
	Targets int
	// Windows, when > 0, cuts Span (the run's time limit) into that many
	// equal windows from the run's start (Begin) and counts, per window,
	// the requests that started and finished in it (stats.Record.Windows), so
	// that a trend through the run can be seen. At most MaxWindows.
	Windows int
	Span    time.Duration
	// Window is the width wanted for the timeline's windows
	// (stats.Timeline), in ns; 0: stats.WindowFor(Span, 0), and for a run
	// without a time limit a narrower start whose width doubles, up to
	// stats.DefaultWindow, while it would have more than
	// 2·stats.MinWindows windows. Every width doubles past
	// stats.TimelineCap windows.
	Window time.Duration
}

// MaxWindows bounds Options.Windows.
const MaxWindows = 256

func newUpstreams(n int) []stats.UpstreamRecord {
	u := make([]stats.UpstreamRecord, n)
	for i := range u {
		u[i].Total.Hist = hdr.New(stats.HistMin, stats.HistMax, 2)
	}
	return u
}

// RawHeader is the header line of the --raw CSV file. Starts are Unix times
// in seconds; times are in milliseconds; intended_start is empty in the
// closed model.
const RawHeader = "intended_start,start,connect_ms,waiting_ms,total_ms,status,bytes,class\n"

const rawFlushAt = 32 << 10

// New returns an empty Recorder.
func New(o Options) *Recorder {
	n := min(max(o.Shards, 1), MaxShards)
	r := &Recorder{shards: make([]*Shard, n), variable: o.VariableLength, errSeen: map[string]int64{}, rawW: o.Raw}
	r.docLen.Store(-1)
	if o.Targets > 1 {
		r.docLens = make([]atomic.Int64, o.Targets)
		for i := range r.docLens {
			r.docLens[i].Store(-1)
		}
	}
	if o.Windows > 0 && o.Span > 0 {
		r.width = max(int64(o.Span)/int64(min(o.Windows, MaxWindows)), 1)
	}
	width, prealloc := stats.WindowFor(o.Span, o.Window), 2*stats.MinWindows
	r.growTo = width
	if o.Span > 0 {
		prealloc = min(int(o.Span/width)+2, 64)
	} else if o.Window <= 0 {
		r.growTo = stats.DefaultWindow
	}
	if o.Targets > 1 {
		r.mix = &mixParts{tally: make([]targetTally, o.Targets), counts: make([]uint32, o.Targets*targetBuckets)}
	}
	for i := range r.shards {
		s := &Shard{rec: r, keep: o.KeepRows}
		if r.mix != nil {
			s.tp = make([]pending, 0, pendingCap)
		}
		if o.Upstreams > 1 {
			s.ups = newUpstreams(o.Upstreams)
		}
		for p := range s.phases {
			s.phases[p].Hist = stats.NewHistogram()
		}
		if o.Windows > 0 && o.Span > 0 {
			s.win = make([]stats.Window, min(o.Windows, MaxWindows))
		}
		s.tl = stats.Timeline{Width: width, Windows: make([]stats.TimelineWindow, 0, prealloc)}
		r.shards[i] = s
	}
	return r
}

// Begin sets the start of the run (load.Now nanoseconds) from which
// Options.Windows are counted. Call it before any worker records.
func (r *Recorder) Begin(start int64) {
	r.origin = start
	r.begun.Store(start + 1)
}

// window returns the index of the window time t falls in, the first or
// the last for a time outside the span.
func (s *Shard) window(t int64) int {
	i := (t - s.rec.origin) / s.rec.width
	return int(min(max(i, 0), int64(len(s.win)-1)))
}

// Shard returns the shard for worker i.
func (r *Recorder) Shard(i int) *Shard { return r.shards[i%len(r.shards)] }

// Done returns how many requests have been recorded so far. It is safe to
// call while workers record.
func (r *Recorder) Done() int64 {
	var n int64
	for _, s := range r.shards {
		n += s.done.Load()
	}
	return n
}

// Failed returns how many of the requests recorded so far failed (Length
// failures included). It is safe to call while workers record.
func (r *Recorder) Failed() int64 {
	var n int64
	for _, s := range r.shards {
		n += s.failed.Load()
	}
	return n
}

// Record adds one result. It applies the Length rule, which may turn an OK
// result into a Length failure (res.Class is updated so that the caller
// sees the final class).
func (s *Shard) Record(res *load.Result) {
	r := s.rec
	if res.Class == load.OK {
		// Load before any CompareAndSwap: a swap, even a failed one, takes
		// the cache line from the other workers' cores on every request.
		doc := &r.docLen
		if r.docLens != nil && res.Target >= 0 && res.Target < len(r.docLens) {
			if r.docLen.Load() == -1 {
				r.docLen.CompareAndSwap(-1, res.BodyBytes) // the report's Document Length
			}
			doc = &r.docLens[res.Target]
		}
		dl := doc.Load()
		if dl == -1 && !doc.CompareAndSwap(-1, res.BodyBytes) {
			dl = doc.Load()
		}
		if dl != -1 && dl != res.BodyBytes && !r.variable {
			res.Class = load.Length
		}
	}
	if res.Server != nil && r.server.Load() == nil && res.Class == load.OK {
		sv := string(res.Server)
		r.server.CompareAndSwap(nil, &sv)
	}
	if res.Stderr != nil && r.stderr.Load() == nil {
		line := firstLine(res.Stderr)
		r.stderr.CompareAndSwap(nil, &line)
	}
	kind := load.KindOther
	if res.Err != nil {
		r.sampleError(res.Err.Error())
		kind = load.KindOf(res.Err)
	}
	if kind == load.KindOther && res.Class == load.Timeout {
		kind = load.KindTimeout
	}

	// The request's window: by when it was due (open model) or sent.
	ref := res.Start
	if res.Intended != 0 {
		ref = res.Intended
	}
	if ref == 0 {
		ref = res.Done
	}

	s.mu.Lock()
	tw := s.timelineWindow(ref)
	tw.BytesRead += res.BytesRead
	c := &s.counts
	if res.Intended != 0 {
		if !res.Queued {
			late := max(res.Start-res.Intended, 0)
			ph := &s.phases[stats.PhaseClientLate]
			ph.Add(late)
			_ = ph.Hist.RecordValue(min((late+500)/1000, stats.HistMax))
		}
		if late := time.Duration(res.Start - res.Intended); late > LateThreshold {
			c.Late++
			tw.Late++
			c.LateSum += late
			c.LateMax = max(c.LateMax, late)
			if res.Queued {
				c.Queued++
			} else {
				c.SchedMax = max(c.SchedMax, late)
			}
		}
	}
	c.BytesRead += res.BytesRead
	c.BytesWritten += res.BytesWritten
	c.StderrBytes += res.StderrBytes
	c.Reconnects += int64(res.Reconnects)
	if res.Unsolicited > 0 {
		c.Unsolicited++
		c.UnsolicitedBytes += res.Unsolicited
	}
	if res.Class != load.OK {
		c.Failures[res.Class]++
		tw.Failures[res.Class]++
		cs := &s.causes[res.Class][kind]
		if cs.n == 0 && res.Err != nil {
			cs.msg = res.Err.Error()
		}
		cs.n++
	}
	if res.Class == load.OK || res.Class == load.Length {
		c.Complete++
		tw.Complete++
		c.BodyBytes += res.BodyBytes
		if res.Status < 200 || res.Status > 299 {
			c.Non2xx++
		}
		if res.KeepAlive {
			c.KeepAlive++
		}
		connect := int64(0)
		if res.Dialed {
			connect = res.Connected - res.Start
			if connect >= int64(time.Second) {
				c.SlowConnects++
			}
		}
		total := res.Done - res.Start
		wait := res.FirstByte - res.Written
		if wait < 0 {
			wait = 0
		}
		v := [stats.PhaseScheduled + 1]int64{connect, total - connect, wait, total, 0}
		np := stats.PhaseTotal + 1
		if res.Intended != 0 {
			v[stats.PhaseScheduled] = res.Done - res.Intended
			np++
		}
		for p := range np {
			ph := &s.phases[p]
			ph.Add(v[p])
			_ = ph.Hist.RecordValue(min(v[p]/1000, stats.HistMax))
		}
		tw.AddLatency(v[np-1])
		if s.win != nil {
			// By the time it was due (open model) or sent, with the
			// latency the objectives judge (np-1: Scheduled or Total).
			ref := res.Start
			if res.Intended != 0 {
				ref = res.Intended
			}
			w := &s.win[s.window(ref)]
			w.Started++
			w.LatencySum += v[np-1]
		}
		if s.keep {
			s.rows = append(s.rows, stats.RawRow{Start: res.Start, Connect: time.Duration(v[0]), Processing: time.Duration(v[1]),
				Waiting: time.Duration(v[2]), Total: time.Duration(v[3])})
		}
	}
	if s.win != nil {
		end := res.Done
		if end == 0 {
			end = res.Start
		}
		s.win[s.window(end)].Finished++
	}
	if r.rawW != nil {
		s.appendRaw(res)
	}
	if s.tp != nil && res.Target >= 0 && res.Target < len(r.mix.tally) {
		e := pending{target: int32(res.Target)}
		if res.Class == load.OK || res.Class == load.Length {
			e.flags, e.total, e.body = pendingComplete, res.Done-res.Start, res.BodyBytes
		}
		if res.Class != load.OK {
			e.flags |= pendingFailed
		}
		s.tp = append(s.tp, e)
		if len(s.tp) == pendingCap {
			s.flushTargets()
		}
	}
	if res.Upstream >= 0 && res.Upstream < len(s.ups) {
		u := &s.ups[res.Upstream]
		if res.Class == load.OK || res.Class == load.Length {
			u.Complete++
			t := res.Done - res.Start
			u.Total.Add(t)
			_ = u.Total.Hist.RecordValue(min(t/1000, stats.HistMax))
		}
		if res.Class != load.OK {
			u.Failed++
		}
	}
	s.mu.Unlock()
	if res.Class != load.OK {
		s.failed.Add(1)
	}
	s.done.Add(1)
}

// flushTargets adds the shard's pending outcomes to the mix's parts.
// Called with s.mu held.
func (s *Shard) flushTargets() {
	m := s.rec.mix
	n := len(m.tally)
	m.mu.Lock()
	for _, e := range s.tp {
		t := &m.tally[e.target]
		t.requests++
		if e.flags&pendingFailed != 0 {
			t.failed++
		}
		if e.flags&pendingComplete != 0 {
			t.body += e.body
			t.total.Add(e.total)
			i := bucketOf(e.total)*n + int(e.target)
			if m.counts[i]++; m.counts[i] == 0 {
				m.wrapped(i)
			}
		}
	}
	m.mu.Unlock()
	s.tp = s.tp[:0]
}

// wrapped keeps the 2^32 of count i, which has just wrapped to 0: once per
// 2^32 requests of one target in one bucket at most. Called with m.mu held.
func (m *mixParts) wrapped(i int) {
	if m.carry == nil {
		m.carry = map[int]int64{}
	}
	m.carry[i] += 1 << 32
}

// The geometry of a target's histogram: an hdrhistogram from stats.HistMin
// (1 µs) to stats.HistMax at stats.TargetSigFigs digits has sub-buckets of
// 2^(subHalfMag+1) values each, the first bucket exact to the µs, each
// next twice as wide, and targetBuckets counts in all.
const (
	subHalfMag    = 7    // 2·10^2 = 200 values at 1 µs resolution, rounded up to 256
	targetBuckets = 3328 // (25 buckets + 1) × 128, to cover stats.HistMax
)

// bucketOf returns the index, among a target's targetBuckets counts, of a
// total time of ns nanoseconds: the index of the count an hdrhistogram
// of the targets' geometry adds it to (its µs, clamped to 0 and
// stats.HistMax, as the phases' are), so that the counts are that
// histogram's exactly (TestBucketsAreHDRs).
func bucketOf(ns int64) int {
	us := uint64(min(max(ns/1000, 0), stats.HistMax))
	b := 64 - bits.LeadingZeros64(us|(1<<(subHalfMag+1)-1)) - (subHalfMag + 1)
	return (b+1)<<subHalfMag + int(us>>b) - 1<<subHalfMag
}

// bucketValue returns the least value, in µs, of the count at index i of
// a target's (the inverse of bucketOf).
func bucketValue(i int) int64 {
	b, sub := i>>subHalfMag-1, i&(1<<subHalfMag-1)+1<<subHalfMag
	if b < 0 {
		b, sub = 0, sub-1<<subHalfMag
	}
	return int64(sub) << b
}

// targets returns the parts of the mix: its tallies and its counts made
// sparse histograms (stats.SparsePhase), read from the buckets of the
// least minimum to the greatest maximum only. Called once every shard's
// pending outcomes have been added (flushTargets).
func (m *mixParts) targets() []stats.TargetRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.tally)
	hs := make([]*hdr.PackedHistogram, n)
	lo, hi := targetBuckets, -1
	for k := range hs {
		hs[k] = hdr.NewPacked(stats.HistMin, stats.HistMax, stats.TargetSigFigs)
		if t := &m.tally[k].total; t.N > 0 {
			lo, hi = min(lo, bucketOf(int64(t.Min))), max(hi, bucketOf(int64(t.Max)))
		}
	}
	for i := lo; i <= hi; i++ {
		for k, c := range m.counts[i*n : (i+1)*n] {
			if c > 0 {
				_ = hs[k].RecordValues(bucketValue(i), int64(c))
			}
		}
	}
	for i, c := range m.carry {
		_ = hs[i%n].RecordValues(bucketValue(i/n), c)
	}
	out := make([]stats.TargetRecord, n)
	for k := range out {
		t := &m.tally[k]
		out[k] = stats.TargetRecord{Requests: t.requests, Complete: t.total.N, Failed: t.failed,
			BodyBytes: t.body, Total: stats.SparsePhase(t.total, hs[k])}
	}
	return out
}

// timelineWindow returns the shard's timeline window of time t (load.Now
// ns), adding windows up to it and doubling the width as Options.Window
// says. Called with s.mu held. It allocates only when the timeline's
// slice grows (once per window at most), never per request.
func (s *Shard) timelineWindow(t int64) *stats.TimelineWindow {
	r := s.rec
	d := time.Duration(max(t-r.origin, 0))
	i := int(d / s.tl.Width)
	for i >= stats.TimelineCap || (i >= 2*stats.MinWindows && s.tl.Width < r.growTo) {
		s.tl.Coarsen()
		i = int(d / s.tl.Width)
	}
	for len(s.tl.Windows) <= i {
		s.tl.Windows = append(s.tl.Windows, stats.TimelineWindow{})
	}
	return &s.tl.Windows[i]
}

// firstLine returns the first non-empty line of b, without surrounding
// space and with control bytes dropped.
func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	s, _, _ = strings.Cut(s, "\n")
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
}

// RecordUnsent adds, in the open model, a request that was due but got no
// outcome, to the corrected latencies (stats.PhaseScheduled) only: latency is
// the time from its intended start to the end of the run, in ns. It is not
// counted as complete or failed.
func (r *Recorder) RecordUnsent(latency int64) {
	s := r.shards[0]
	s.mu.Lock()
	ph := &s.phases[stats.PhaseScheduled]
	ph.Add(latency)
	_ = ph.Hist.RecordValue(min(latency/1000, stats.HistMax))
	s.mu.Unlock()
}

// appendRaw adds the CSV line of res to the shard's pending block and
// writes the block when it is large enough. Called with s.mu held.
func (s *Shard) appendRaw(res *load.Result) {
	b := s.raw
	if res.Intended != 0 {
		b = appendUnix(b, res.Intended)
	}
	b = append(b, ',')
	b = appendUnix(b, res.Start)
	b = append(b, ',')
	connect := int64(0)
	if res.Dialed {
		connect = res.Connected - res.Start
	}
	wait := int64(0)
	if res.FirstByte > 0 {
		wait = res.FirstByte - res.Written
	}
	for _, v := range [...]int64{connect, wait, res.Done - res.Start} {
		b = strconv.AppendFloat(b, float64(v)/1e6, 'f', 3, 64)
		b = append(b, ',')
	}
	b = strconv.AppendInt(b, int64(res.Status), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, res.BytesRead, 10)
	b = append(b, ',')
	b = append(b, res.Class.String()...)
	b = append(b, '\n')
	s.raw = b
	if len(b) >= rawFlushAt {
		s.flushRaw()
	}
}

// flushRaw writes the shard's pending raw lines. Called with s.mu held.
func (s *Shard) flushRaw() {
	r := s.rec
	if len(s.raw) == 0 {
		return
	}
	r.rawMu.Lock()
	if r.rawErr == nil {
		_, r.rawErr = r.rawW.Write(s.raw)
	}
	r.rawMu.Unlock()
	s.raw = s.raw[:0]
}

func appendUnix(b []byte, ns int64) []byte {
	t := load.Time(ns)
	return strconv.AppendFloat(b, float64(t.UnixMicro())/1e6, 'f', 6, 64)
}

func (r *Recorder) sampleError(msg string) {
	r.errMu.Lock()
	if _, ok := r.errSeen[msg]; ok || len(r.errSeen) < stats.MaxErrorSamples {
		r.errSeen[msg]++
	}
	r.errMu.Unlock()
}

// Merge combines the shards into the run's stats.Record: its counts, phases,
// upstream parts and causes. Call it after every worker has stopped; the
// caller sets the plan, times, environment and health.
func (r *Recorder) Merge() *stats.Record {
	m := &stats.Record{Schema: stats.Schema, DocumentLength: max(r.docLen.Load(), 0), Causes: []stats.Cause{}, Notes: []string{}}
	m.Plan.VariableLength = r.variable
	if p := r.server.Load(); p != nil {
		m.ServerSoftware = *p
	}
	if p := r.stderr.Load(); p != nil {
		m.StderrFirstLine = *p
	}
	for p := range m.Phases {
		m.Phases[p].Hist = stats.NewHistogram()
	}
	var causes [load.NumClasses][load.NumKinds]causeSlot
	var rows []stats.RawRow
	for _, s := range r.shards {
		s.mu.Lock()
		for p := range m.Phases {
			m.Phases[p].Merge(&s.phases[p])
		}
		m.Counts.Merge(&s.counts)
		rows = append(rows, s.rows...)
		if len(s.ups) > 0 && m.Upstreams == nil {
			m.Upstreams = newUpstreams(len(s.ups))
		}
		for i := range s.ups {
			u, o := &m.Upstreams[i], &s.ups[i]
			u.Complete += o.Complete
			u.Failed += o.Failed
			u.Total.Merge(&o.Total)
		}
		for cl := range causes {
			for k := range causes[cl] {
				c, o := &causes[cl][k], &s.causes[cl][k]
				if c.msg == "" {
					c.msg = o.msg
				}
				c.n += o.n
			}
		}
		if r.rawW != nil {
			s.flushRaw()
		}
		if s.tp != nil {
			s.flushTargets()
		}
		if s.win != nil && m.Windows == nil {
			m.Windows, m.WindowWidth = make([]stats.Window, len(s.win)), time.Duration(r.width)
		}
		for i := range s.win {
			m.Windows[i].Started += s.win[i].Started
			m.Windows[i].LatencySum += s.win[i].LatencySum
			m.Windows[i].Finished += s.win[i].Finished
		}
		s.mu.Unlock()
	}
	m.Timeline = r.timeline()
	if r.mix != nil {
		m.Targets = r.mix.targets()
	}
	for cl := range causes {
		for k, c := range causes[cl] {
			if c.n > 0 {
				m.Causes = append(m.Causes, stats.Cause{Class: load.ErrClass(cl), Kind: load.Kind(k), Count: c.n, Message: c.msg})
			}
		}
	}
	r.errMu.Lock()
	m.ErrorSamples = stats.SortedSamples(r.errSeen)
	r.errMu.Unlock()
	m.SetRows(rows)
	r.rawMu.Lock()
	m.SetRawErr(r.rawErr)
	r.rawMu.Unlock()
	return m
}

// timeline merges the shards' timelines into the run's, at the widest
// of their widths (each is the first width times a power of two, from the
// same origin: the merge is exact). Its start is the run's (Begin).
func (r *Recorder) timeline() *stats.Timeline {
	t := &stats.Timeline{Start: stats.Wall{Time: load.Time(r.origin)}}
	for _, s := range r.shards {
		s.mu.Lock()
		t.Width = max(t.Width, s.tl.Width)
		s.mu.Unlock()
	}
	for _, s := range r.shards {
		s.mu.Lock()
		s.tl.CoarsenTo(t.Width)
		for len(t.Windows) < len(s.tl.Windows) {
			t.Windows = append(t.Windows, stats.TimelineWindow{})
		}
		for i := range s.tl.Windows {
			t.Windows[i].Merge(&s.tl.Windows[i])
		}
		s.mu.Unlock()
	}
	return t
}

// Recent is what the requests of the last finished window of the
// timeline did, for the live progress line.
type Recent struct {
	// Rate is their complete requests per second of the window.
	Rate float64
	// P99 is their 99th percentile latency.
	P99 time.Duration
	// Failed counts their failures.
	Failed int64
	// OK is false before the first window has finished.
	OK bool
}

// Recent returns the last finished window before now (load.Now ns);
// nothing before Begin. It takes each shard's lock and copies one window:
// for a progress line, not for the hot path.
func (r *Recorder) Recent(now int64) Recent {
	var out Recent
	b := r.begun.Load()
	if b == 0 {
		return out
	}
	var sum stats.TimelineWindow
	d := time.Duration(now - (b - 1))
	for _, s := range r.shards {
		s.mu.Lock()
		if i := int(d/s.tl.Width) - 1; i >= 0 {
			out.OK = true
			if i < len(s.tl.Windows) {
				w := &s.tl.Windows[i]
				sum.Merge(w)
				out.Rate += float64(w.Complete) / s.tl.Width.Seconds()
			}
		}
		s.mu.Unlock()
	}
	out.P99, out.Failed = sum.Latency(99), sum.Failed()
	return out
}

// Completed returns how many requests have completed so far (Length
// failures included, as in the report's Complete requests). It takes each
// shard's lock: not for the hot path.
func (r *Recorder) Completed() int64 {
	var n int64
	for _, s := range r.shards {
		s.mu.Lock()
		n += s.counts.Complete
		s.mu.Unlock()
	}
	return n
}

// Package stats records the outcome of every request of a run and reduces
// them to a Summary: pure data, with JSON tags, that the reporters render.
//
// Latencies go into HDR histograms (github.com/HdrHistogram/hdrhistogram-go)
// with 3 significant digits (percentiles within 0.1% of the value) from 1 µs
// to 1 hour, one set per shard, merged after the run; memory does not grow
// with the request count. Exact count, min, max, mean and standard deviation
// are kept beside the histograms. Workers record into a shard under a short
// lock; a run has at most MaxShards shards, so the histogram memory stays a
// few MiB whatever the concurrency.
//
// The Length rule is ab's: the body length of the first completed response
// is the document length, and a later completed response whose body length
// differs is a Length failure (still counted complete) unless the length is
// declared variable.
package stats

import (
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/backbench/backbench/internal/load"
)

// MaxShards bounds the number of shards of a Recorder.
const MaxShards = 16

// MaxErrorSamples is how many distinct error messages a Recorder keeps.
const MaxErrorSamples = 8

// Histogram bounds, in microseconds.
const (
	histMin  = 1
	histMax  = 3_600_000_000 // one hour
	histSigF = 3
)

// Phase indexes the four ab phases.
type Phase int

// The ab phases (REFERENCE: Connect, Processing, Waiting, Total).
const (
	PhaseConnect Phase = iota
	PhaseProcessing
	PhaseWaiting
	PhaseTotal
	// PhaseScheduled is the total time from the intended start (open
	// model only): the latency corrected for coordinated omission.
	PhaseScheduled
	// PhaseClientLate is, in the open model, how late the client sent a
	// request whose worker was free and waiting for its intended start
	// (actual start minus intended start): the client's own pacing error,
	// which the corrected latencies include.
	PhaseClientLate
	numPhases
)

// LateThreshold is how far after its intended time a request must be sent
// to count as late in the open model, in nanoseconds.
const LateThreshold = int64(time.Millisecond)

// moments keeps exact count, sum, sum of squares, min and max of one phase,
// in nanoseconds.
type moments struct {
	n          int64
	sum, sumsq float64
	min, max   int64
}

func (m *moments) add(v int64) {
	if m.n == 0 || v < m.min {
		m.min = v
	}
	if v > m.max {
		m.max = v
	}
	m.n++
	f := float64(v)
	m.sum += f
	m.sumsq += f * f
}

func (m *moments) merge(o *moments) {
	if o.n == 0 {
		return
	}
	if m.n == 0 || o.min < m.min {
		m.min = o.min
	}
	if o.max > m.max {
		m.max = o.max
	}
	m.n += o.n
	m.sum += o.sum
	m.sumsq += o.sumsq
}

// RawRow is one completed request, kept only when a Recorder is asked to keep
// rows (ab's -g file). Times are in nanoseconds; Start is from load.Now.
type RawRow struct {
	Start, Connect, Processing, Waiting, Total int64
}

// Shard is the part of a Recorder that a group of workers records into.
type Shard struct {
	mu     sync.Mutex
	hist   [numPhases]*hdr.Histogram
	mom    [numPhases]moments
	counts counts
	rows   []RawRow
	keep   bool
	raw    []byte // pending --raw lines
	ups    []upStats
	rec    *Recorder
	done   atomic.Int64 // requests recorded, for progress
	failed atomic.Int64 // failed requests recorded, for progress
	_      [64]byte     // keeps the next shard's lock off this one's cache lines
}

type counts struct {
	complete, non2xx, keepAlive, reconnects int64
	slowConnects                            int64 // connects of 1 s or more
	// Open model: requests sent late (by more than LateThreshold), how
	// many of them because every worker was busy, and their lateness.
	late, queued                       int64
	lateSum, lateMax                   int64
	schedMax                           int64 // worst lateness of a request whose worker was free
	failures                           [load.NumClasses]int64
	bytesRead, bodyBytes, bytesWritten int64
	stderrBytes                        int64
	first, last                        int64 // Start of first, Done of last request
}

// Recorder collects the results of one run.
type Recorder struct {
	shards   []*Shard
	variable bool
	docLen   atomic.Int64 // -1 until the first completed response
	server   atomic.Pointer[string]
	stderr   atomic.Pointer[string] // first line of the first FastCGI STDERR sample

	errMu   sync.Mutex
	errSeen map[string]int64

	rawMu  sync.Mutex
	rawW   io.Writer
	rawErr error
}

// Options configures a Recorder.
type Options struct {
	// Shards is the number of shards, usually the concurrency; it is
	// capped at MaxShards.
	Shards int
	// VariableLength turns the Length rule off (ab's -l).
	VariableLength bool
	// KeepRows keeps one RawRow per completed request (for ab's -g file
	// and --ab-compat); memory then grows with the request count.
	KeepRows bool
	// Raw, when not nil, receives one CSV line per request (see
	// RawHeader), streamed in blocks of whole lines as the run goes.
	Raw io.Writer
	// Upstreams, when > 1, keeps counts and latencies per upstream
	// address (load.Result.Upstream) of a cluster target.
	Upstreams int
}

// upStats are the counts and total-time statistics of one upstream.
type upStats struct {
	complete, failed int64
	mom              moments
	hist             *hdr.Histogram
}

func newUpStats(n int) []upStats {
	u := make([]upStats, n)
	for i := range u {
		u[i].hist = hdr.New(histMin, histMax, 2)
	}
	return u
}

// RawHeader is the header line of the --raw CSV file. Starts are Unix times
// in seconds; times are in milliseconds; intended_start is empty in the
// closed model.
const RawHeader = "intended_start,start,connect_ms,waiting_ms,total_ms,status,bytes,class\n"

const rawFlushAt = 32 << 10

// NewRecorder returns an empty Recorder.
func NewRecorder(o Options) *Recorder {
	n := min(max(o.Shards, 1), MaxShards)
	r := &Recorder{shards: make([]*Shard, n), variable: o.VariableLength, errSeen: map[string]int64{}, rawW: o.Raw}
	r.docLen.Store(-1)
	for i := range r.shards {
		s := &Shard{rec: r, keep: o.KeepRows}
		if o.Upstreams > 1 {
			s.ups = newUpStats(o.Upstreams)
		}
		for p := range s.hist {
			s.hist[p] = hdr.New(histMin, histMax, histSigF)
		}
		r.shards[i] = s
	}
	return r
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
		dl := r.docLen.Load()
		if dl == -1 && !r.docLen.CompareAndSwap(-1, res.BodyBytes) {
			dl = r.docLen.Load()
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
	if res.Err != nil {
		r.sampleError(res.Err.Error())
	}

	s.mu.Lock()
	c := &s.counts
	if res.Intended != 0 {
		if !res.Queued {
			late := max(res.Start-res.Intended, 0)
			s.mom[PhaseClientLate].add(late)
			_ = s.hist[PhaseClientLate].RecordValue(min((late+500)/1000, histMax))
		}
		if late := res.Start - res.Intended; late > LateThreshold {
			c.late++
			c.lateSum += late
			c.lateMax = max(c.lateMax, late)
			if res.Queued {
				c.queued++
			} else {
				c.schedMax = max(c.schedMax, late)
			}
		}
	}
	if c.first == 0 || res.Start < c.first {
		c.first = res.Start
	}
	if res.Done > c.last {
		c.last = res.Done
	}
	c.bytesRead += res.BytesRead
	c.bytesWritten += res.BytesWritten
	c.stderrBytes += res.StderrBytes
	c.reconnects += int64(res.Reconnects)
	if res.Class != load.OK {
		c.failures[res.Class]++
	}
	if res.Class == load.OK || res.Class == load.Length {
		c.complete++
		c.bodyBytes += res.BodyBytes
		if res.Status < 200 || res.Status > 299 {
			c.non2xx++
		}
		if res.KeepAlive {
			c.keepAlive++
		}
		connect := int64(0)
		if res.Dialed {
			connect = res.Connected - res.Start
			if connect >= int64(time.Second) {
				c.slowConnects++
			}
		}
		total := res.Done - res.Start
		wait := res.FirstByte - res.Written
		if wait < 0 {
			wait = 0
		}
		v := [PhaseScheduled + 1]int64{connect, total - connect, wait, total, 0}
		np := PhaseTotal + 1
		if res.Intended != 0 {
			v[PhaseScheduled] = res.Done - res.Intended
			np++
		}
		for p := range np {
			s.mom[p].add(v[p])
			us := v[p] / 1000
			if us > histMax {
				us = histMax
			}
			_ = s.hist[p].RecordValue(us)
		}
		if s.keep {
			s.rows = append(s.rows, RawRow{Start: res.Start, Connect: v[0], Processing: v[1], Waiting: v[2], Total: v[3]})
		}
	}
	if r.rawW != nil {
		s.appendRaw(res)
	}
	if res.Upstream >= 0 && res.Upstream < len(s.ups) {
		u := &s.ups[res.Upstream]
		if res.Class == load.OK || res.Class == load.Length {
			u.complete++
			t := res.Done - res.Start
			u.mom.add(t)
			_ = u.hist.RecordValue(min(t/1000, histMax))
		}
		if res.Class != load.OK {
			u.failed++
		}
	}
	s.mu.Unlock()
	if res.Class != load.OK {
		s.failed.Add(1)
	}
	s.done.Add(1)
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
// outcome, to the corrected latencies (PhaseScheduled) only: latency is
// the time from its intended start to the end of the run, in ns. It is not
// counted as complete or failed.
func (r *Recorder) RecordUnsent(latency int64) {
	s := r.shards[0]
	s.mu.Lock()
	s.mom[PhaseScheduled].add(latency)
	_ = s.hist[PhaseScheduled].RecordValue(min(latency/1000, histMax))
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
	if _, ok := r.errSeen[msg]; ok || len(r.errSeen) < MaxErrorSamples {
		r.errSeen[msg]++
	}
	r.errMu.Unlock()
}

// Merged is the union of every shard, after the run.
type Merged struct {
	hist     [numPhases]*hdr.Histogram
	mom      [numPhases]moments
	counts   counts
	rows     []RawRow
	docLen   int64
	server   string
	stderr   string
	errSeen  map[string]int64
	variable bool
	rawErr   error
	ups      []upStats
}

// Merge combines the shards. Call it after every worker has stopped.
func (r *Recorder) Merge() *Merged {
	m := &Merged{docLen: r.docLen.Load(), errSeen: map[string]int64{}, variable: r.variable}
	if m.docLen < 0 {
		m.docLen = 0
	}
	if p := r.server.Load(); p != nil {
		m.server = *p
	}
	if p := r.stderr.Load(); p != nil {
		m.stderr = *p
	}
	for p := range m.hist {
		m.hist[p] = hdr.New(histMin, histMax, histSigF)
	}
	for _, s := range r.shards {
		s.mu.Lock()
		for p := range m.hist {
			m.hist[p].Merge(s.hist[p])
			m.mom[p].merge(&s.mom[p])
		}
		c, o := &m.counts, &s.counts
		if o.first != 0 && (c.first == 0 || o.first < c.first) {
			c.first = o.first
		}
		c.last = max(c.last, o.last)
		c.complete += o.complete
		c.non2xx += o.non2xx
		c.keepAlive += o.keepAlive
		c.reconnects += o.reconnects
		c.slowConnects += o.slowConnects
		c.bytesRead += o.bytesRead
		c.bodyBytes += o.bodyBytes
		c.bytesWritten += o.bytesWritten
		c.stderrBytes += o.stderrBytes
		for i := range c.failures {
			c.failures[i] += o.failures[i]
		}
		c.late += o.late
		c.queued += o.queued
		c.lateSum += o.lateSum
		c.lateMax = max(c.lateMax, o.lateMax)
		c.schedMax = max(c.schedMax, o.schedMax)
		m.rows = append(m.rows, s.rows...)
		if len(s.ups) > 0 && m.ups == nil {
			m.ups = newUpStats(len(s.ups))
		}
		for i := range s.ups {
			u, o := &m.ups[i], &s.ups[i]
			u.complete += o.complete
			u.failed += o.failed
			u.mom.merge(&o.mom)
			u.hist.Merge(o.hist)
		}
		if r.rawW != nil {
			s.flushRaw()
		}
		s.mu.Unlock()
	}
	r.errMu.Lock()
	for k, v := range r.errSeen {
		m.errSeen[k] = v
	}
	r.errMu.Unlock()
	r.rawMu.Lock()
	m.rawErr = r.rawErr
	r.rawMu.Unlock()
	return m
}

// RawErr returns the first error writing the raw file, if any.
func (m *Merged) RawErr() error { return m.rawErr }

// Rows returns the kept raw rows (nil unless Options.KeepRows).
func (m *Merged) Rows() []RawRow { return m.rows }

// PhaseStats is one row of ab's "Connection Times (ms)" table, in
// milliseconds, with exact min, max, mean and sample standard deviation and
// the HDR median.
type PhaseStats struct {
	Min    float64 `json:"min"`
	Mean   float64 `json:"mean"`
	SD     float64 `json:"sd"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

func (m *Merged) phase(p Phase) PhaseStats {
	mo := &m.mom[p]
	if mo.n == 0 {
		return PhaseStats{}
	}
	mean := mo.sum / float64(mo.n)
	sd := 0.0
	if mo.n > 1 {
		v := (mo.sumsq - mo.sum*mean) / float64(mo.n-1)
		if v > 0 {
			sd = math.Sqrt(v)
		}
	}
	return PhaseStats{
		Min:    float64(mo.min) / 1e6,
		Mean:   mean / 1e6,
		SD:     sd / 1e6,
		Median: m.quantile(p, 50),
		Max:    float64(mo.max) / 1e6,
	}
}

// quantile returns the q-th percentile (0..100) of phase p in ms. The top
// (q = 100) is the exact maximum; other values are HDR estimates clamped to
// the exact min and max.
func (m *Merged) quantile(p Phase, q float64) float64 {
	mo := &m.mom[p]
	if mo.n == 0 {
		return 0
	}
	if q >= 100 {
		return float64(mo.max) / 1e6
	}
	if q <= 0 {
		return float64(mo.min) / 1e6
	}
	v := float64(m.hist[p].ValueAtQuantile(q)) / 1e3 // µs to ms
	lo, hi := float64(mo.min)/1e6, float64(mo.max)/1e6
	return math.Min(math.Max(v, lo), hi)
}

// PhaseCount returns how many values phase p holds.
func (m *Merged) PhaseCount(p Phase) int64 { return m.mom[p].n }

// Quantile returns the q-th percentile (0..100) of the total time in ms.
func (m *Merged) Quantile(q float64) float64 { return m.quantile(PhaseTotal, q) }

// Completed returns how many requests have completed so far (Length
// failures included, as in the report's Complete requests). It takes each
// shard's lock: not for the hot path.
func (r *Recorder) Completed() int64 {
	var n int64
	for _, s := range r.shards {
		s.mu.Lock()
		n += s.counts.complete
		s.mu.Unlock()
	}
	return n
}

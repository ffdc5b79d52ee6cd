// Package stats holds the record of a run: a Record, what one run (or
// several merged runs of the same plan) measured (counts by failure class,
// exact moments and HDR histograms per phase, per-upstream parts, typed
// failure causes, the plan, the environment and the run's Timeline of
// windows), in a JSON form (schema 1)
// that is saved, read back, validated and merged exactly: the one merge
// of records (Merger, merge.go), with its one rule of the same plan
// (PlanDiff) and its policy (Together, InTurn).
// It also holds the parts a record is made of (TargetInfo, ClientHealth,
// BackendUsage, TLSInfo ...), the Environment of a run and EncodeJSON,
// the one JSON writer of every command.
//
// And ab's figures derived from a record (summary.go): the Summary
// (requests per second, time per request, the connection times table,
// percentiles and spectrum, the open model's accounting, upstream parts,
// client warnings) that every report renders, with its methods (Finished,
// ListenOverflow, CheckSummary) and the verdicts and trial figures that
// commands add to it (SLOResult, Repeated). A Summary is pure data with
// JSON tags; it holds nothing that its record cannot give again. A run's
// summary is derived once: the executor derives it when the record is
// final and returns it with the record in a Run, a value every later
// reader of the run takes it from; a record read from a file or made by a
// merge has its summary derived where it is read or made (SummaryOf).
//
// Not here: the recording of requests during a run (package recorder,
// which produces a Record, and imports stats) and the rendering of a
// summary (package report).
package stats

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/backbench/backbench/internal/load"
)

// Schema is the version of the Record's JSON form (docs/format.md: "The run
// record"). It changes only when a key changes meaning or goes away; new
// keys do not change it.
const Schema = 1

// Record is everything one run (or several merged runs of the same plan)
// measured, in a form that is saved as JSON, read back and merged exactly:
// counts by failure class, bytes, each phase's exact moments and HDR
// histogram, per-upstream parts, typed failure causes, the wall-clock start
// and end, the plan and the environment. The ab figures are derived from it
// (SummaryOf); nothing in a Summary is kept that a Record cannot give
// again.
type Record struct {
	// Schema is the version of the JSON form: always Schema when written.
	Schema int `json:"schema"`
	// StartedAt and EndedAt bound the run's measurement window in
	// wall-clock time (Unix seconds with microseconds in JSON): a timed
	// run's window ends at its time limit, before the requests then in
	// flight were drained (Counts.Drained).
	StartedAt Wall `json:"started_at"`
	EndedAt   Wall `json:"ended_at"`
	// Elapsed is the length of the run's measurement window on the
	// monotonic clock (for merged records: from the earliest start to the
	// latest end).
	Elapsed time.Duration `json:"elapsed_ns"`
	// Interrupted reports a run stopped by a signal.
	Interrupted bool `json:"interrupted"`
	// Plan is what was asked for.
	Plan Plan `json:"plan"`
	// Environment is where the run was made.
	Environment Environment `json:"environment"`
	// Counts are the request, failure and byte counts.
	Counts Counts `json:"counts"`
	// Phases holds the latency of every completed request, per ab phase.
	Phases Phases `json:"phases"`
	// Upstreams has one part per address of a cluster target, in the
	// order of Plan.Upstreams; empty for one address.
	Upstreams []UpstreamRecord `json:"upstreams,omitempty"`
	// Targets has one part per request of a mix (--targets), in the
	// order of Plan.Targets; empty for one request.
	Targets []TargetRecord `json:"targets,omitempty"`
	// Causes count the failures by class and kind, with one sample message
	// each, in class then kind order.
	Causes []Cause `json:"causes"`
	// ErrorSamples are up to MaxErrorSamples distinct failure messages and
	// how often each was seen.
	ErrorSamples []ErrorSample `json:"error_samples"`
	// DocumentLength is the body length of the first completed response,
	// in bytes (ab's "Document Length").
	DocumentLength int64 `json:"document_length"`
	// ServerSoftware is the Server header of the first complete response.
	ServerSoftware string `json:"server_software"`
	// StderrFirstLine is the first line of the first FastCGI STDERR
	// output; empty when there was none.
	StderrFirstLine string `json:"fcgi_stderr_first_line,omitempty"`
	// Client is the client's own resource use during the run.
	Client ClientHealth `json:"client"`
	// Backend is the backend's resource use, when sampled.
	Backend *BackendUsage `json:"backend,omitempty"`
	// TLS describes the TLS sessions of an https target.
	TLS *TLSInfo `json:"tls,omitempty"`
	// Notes name connection-level conditions met during the run.
	Notes []string `json:"notes"`
	// ListenOverflows and ListenDrops are the rise of the kernel's
	// machine-wide TcpExt counters during the run; ListenBacklog the
	// listen backlog of a local target's socket; nil when not read.
	ListenOverflows *int64 `json:"listen_overflows,omitempty"`
	ListenDrops     *int64 `json:"listen_drops,omitempty"`
	ListenBacklog   *int   `json:"listen_backlog,omitempty"`
	// ListenQueues are the target's own listening sockets on this machine,
	// as the kernel keeps them per socket (sock_diag); empty for a remote
	// target or when they could not be read.
	ListenQueues []ListenQueue `json:"listen_queues,omitempty"`
	// BackendLost says when the backend stopped accepting connections
	// during the run; nil when it did not.
	BackendLost *BackendLost `json:"backend_lost,omitempty"`
	// Timeline is what happened in each slice of the run's time (see
	// Timeline); nil in records made before it.
	Timeline *Timeline `json:"timeline,omitempty"`
	// Windows, when the recorder was asked for them (recorder.Options.Windows),
	// cut the run's time limit into equal slices of WindowWidth from its
	// start; not saved (a capacity step's judgement of steady state reads
	// them) and not merged by Merge.
	Windows     []Window      `json:"-"`
	WindowWidth time.Duration `json:"-"`
	// Unreachable is the dial error of a run none of whose dials reached
	// the target (not saved: a saved run reached it).
	Unreachable error `json:"-"`

	rows   []RawRow
	rawErr error
}

// Window is one slice of a run's time.
type Window struct {
	// Started counts the completed requests (Length failures included)
	// that were due (open model) or sent (closed model) in the window;
	// LatencySum adds their latencies, in ns, from the same time (the
	// corrected latency in the open model, the total time in the closed).
	Started    int64
	LatencySum int64
	// Finished counts the requests, completed or failed, that ended in
	// the window.
	Finished int64
}

// MeanLatency returns the mean latency of the requests started in the
// window, in ms (0 when none completed).
func (w Window) MeanLatency() float64 {
	if w.Started == 0 {
		return 0
	}
	return float64(w.LatencySum) / float64(w.Started) / 1e6
}

// Plan describes a run as asked for: the target, the load shape and the
// client's options. It is pure data; the executor builds clients from it.
type Plan struct {
	// Target is what was measured (the URL as typed, protocol, network,
	// address).
	Target TargetInfo `json:"target"`
	// Hostname, Port and Path are ab's "Server Hostname", "Server Port"
	// and "Document Path".
	Hostname string `json:"server_hostname"`
	Port     string `json:"server_port"`
	Path     string `json:"document_path"`
	// Upstreams are the addresses of a cluster target (load.Result.Upstream
	// indexes them); Balance spreads connections over them.
	Upstreams []string `json:"upstreams,omitempty"`
	Balance   string   `json:"balance,omitempty"`
	// Targets are the requests of a mix (--targets), each "METHOD URL"
	// as the targets file gives it (load.Result.Target indexes them),
	// and Weights their weights; empty for one request.
	Targets []string `json:"targets,omitempty"`
	Weights []int    `json:"target_weights,omitempty"`
	// Replay describes the access log the targets were read from
	// (--access-log); absent otherwise.
	Replay *Replay `json:"replay,omitempty"`
	// Shape is the load's shape: -c, -n, -t, --rate and the stages.
	Shape
	// Timeout bounds one request, from dial to last byte.
	Timeout time.Duration `json:"timeout_ns"`
	// KeepAlive reports -k.
	KeepAlive bool `json:"keep_alive"`
	// HTTPVersion is "1.1" or "1.0" for HTTP targets, "" for FastCGI.
	HTTPVersion string `json:"http_version,omitempty"`
	// ConnectionHeader is the Connection header sent to an HTTP target
	// ("" when none is sent).
	ConnectionHeader string `json:"connection_header,omitempty"`
	// Wire is what the protocol says of its requests in the report's
	// words; nil in records written before it (see Wire).
	Wire *Wire `json:"wire,omitempty"`
	// Method is the request method.
	Method string `json:"method"`
	// BodySize is the size of the request body, in bytes.
	BodySize int64 `json:"body_bytes"`
	// VariableLength turns the Length rule off (-l).
	VariableLength bool `json:"variable_length"`
	// ABCompat asks for ab's own arithmetic (kept rows).
	ABCompat bool `json:"ab_compat"`
}

// Shape is the shape of a load: how many requests at a time, how many in
// all, for how long, at what rate and in what stages. One value from the
// flags to the record: a bench's flags bind into it (plan.Options), the
// executor's plan keeps it (execute.Plan), a run's workers read it, and
// the record keeps it as it ran (Plan; in JSON, its keys are the plan's
// own).
type Shape struct {
	// Concurrency is the number of workers (-c; the in-flight ceiling in
	// the open model); records merged Together
	// add them (see Policy).
	Concurrency int `json:"concurrency"`
	// Requests is the request budget (-n); 0 with a time limit alone.
	// Merged records add them.
	Requests int64 `json:"requests"`
	// Duration is the time limit of the run (-t); 0 for none.
	Duration time.Duration `json:"time_limit_ns"`
	// Rate is the open model's arrival rate in requests per second; 0 in
	// the closed model. With Stages, the mean rate they ask for.
	Rate float64 `json:"rate"`
	// Stages, when not empty, is the load in stages (bench --stages): the
	// rate of each in the open model, the concurrency in the closed; Ramp
	// says the load moves linearly across each stage from the previous
	// stage's (0 before the first) instead of jumping.
	Stages []Stage `json:"stages,omitempty"`
	Ramp   bool    `json:"ramp,omitempty"`
}

// Wire is what a run's protocol put on the wire, in the words of the
// report's Protocol, Keep-alive and error-stream lines, set by the
// protocol (internal/protocol) so that a renderer needs to know no
// protocol. A record written before it has none: its protocol was HTTP
// when it has an HTTP version, FastCGI otherwise (the report derives the
// same words from that).
type Wire struct {
	// Protocol names the protocol as the Protocol line does:
	// "FastCGI (RESPONDER)", "HTTP/1.1".
	Protocol string `json:"protocol"`
	// KeepAlive says how keeping the connection was asked, or not, for
	// the Keep-alive line: "FCGI_KEEP_CONN set", "Connection: close",
	// "HTTP/1.0, no Connection header sent".
	KeepAlive string `json:"keep_alive"`
	// Stderr names the protocol's error stream, whose bytes the record
	// counts (Counts.StderrBytes): "FastCGI stderr"; "" when it has none.
	Stderr string `json:"stderr,omitempty"`
}

// Wall is a wall-clock time, in JSON as Unix seconds with microseconds
// (1764556800.123456), read back exactly.
type Wall struct{ time.Time }

// MarshalJSON writes the time as Unix seconds with six decimals.
func (w Wall) MarshalJSON() ([]byte, error) {
	if w.IsZero() {
		return []byte("0"), nil
	}
	us := w.UnixMicro()
	sign := ""
	if us < 0 {
		sign, us = "-", -us
	}
	return fmt.Appendf(nil, "%s%d.%06d", sign, us/1e6, us%1e6), nil
}

// UnmarshalJSON reads Unix seconds with up to six decimals.
func (w *Wall) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "0" || s == "null" {
		*w = Wall{}
		return nil
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	secs, frac, _ := strings.Cut(s, ".")
	if len(frac) > 6 {
		return fmt.Errorf("stats: time %s: more than microseconds", b)
	}
	frac += strings.Repeat("0", 6-len(frac))
	sec, err1 := strconv.ParseInt(secs, 10, 64)
	us, err2 := strconv.ParseInt(frac, 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("stats: time %s: want Unix seconds", b)
	}
	v := sec*1e6 + us
	if neg {
		v = -v
	}
	w.Time = time.UnixMicro(v)
	return nil
}

// Counts are the request, failure and byte counts of a run.
type Counts struct {
	// Complete counts full responses (Length failures included, as ab).
	Complete int64 `json:"complete"`
	// Failures counts failed requests by class.
	Failures ClassCounts `json:"failures"`
	// Non2xx counts complete responses whose status is not 2xx.
	Non2xx int64 `json:"non_2xx"`
	// KeepAlive counts responses after which the connection stayed open.
	KeepAlive int64 `json:"keep_alive"`
	// Reconnects counts dead kept connections redialed.
	Reconnects int64 `json:"reconnects"`
	// Unsolicited counts complete responses after which the server sent
	// bytes nobody asked for, UnsolicitedBytes those bytes (see
	// load.Result.Unsolicited): the client dropped each such connection.
	// The keys are left out when 0.
	Unsolicited      int64 `json:"unsolicited,omitempty"`
	UnsolicitedBytes int64 `json:"unsolicited_bytes,omitempty"`
	// Drained counts the requests in flight when the run's window closed
	// (its time limit): let finish within the request timeout on their
	// connections, and counted neither complete nor failed, nor in any
	// other count or phase. At an interrupt they are cut and counted here
	// too. The key is left out when 0.
	Drained int64 `json:"drained,omitempty"`
	// SlowConnects counts complete requests whose connect took 1 s or
	// more (a SYN dropped by a full listen queue is retransmitted after
	// 1 s).
	SlowConnects int64 `json:"slow_connects"`
	// BytesRead, BodyBytes, BytesWritten and StderrBytes are in bytes:
	// everything read, the response bodies of complete responses, the
	// requests written, and FastCGI stderr.
	BytesRead    int64 `json:"bytes_read"`
	BodyBytes    int64 `json:"body_bytes"`
	BytesWritten int64 `json:"bytes_written"`
	StderrBytes  int64 `json:"stderr_bytes"`
	// Late counts open-model requests sent more than recorder.LateThreshold after
	// their intended time; Queued those late because every worker was
	// busy. LateSum and LateMax add up their lateness; SchedMax is the
	// worst lateness of a request whose worker was free.
	Late     int64         `json:"late"`
	Queued   int64         `json:"queued"`
	LateSum  time.Duration `json:"late_sum_ns"`
	LateMax  time.Duration `json:"late_max_ns"`
	SchedMax time.Duration `json:"sched_late_max_ns"`
	// Due, Unsent and UnsentInFlight are the open model's accounting:
	// requests due by the schedule (rate × time as scheduled, at most
	// -n), those due that got no outcome, and those of them cut off in
	// flight at the end (see OpenModel).
	Due            int64 `json:"due"`
	Unsent         int64 `json:"unsent"`
	UnsentInFlight int64 `json:"unsent_in_flight"`
}

// Merge adds o's counts to c.
func (c *Counts) Merge(o *Counts) {
	c.Complete += o.Complete
	c.Failures.Merge(&o.Failures)
	c.Non2xx += o.Non2xx
	c.KeepAlive += o.KeepAlive
	c.Reconnects += o.Reconnects
	c.Unsolicited += o.Unsolicited
	c.UnsolicitedBytes += o.UnsolicitedBytes
	c.Drained += o.Drained
	c.SlowConnects += o.SlowConnects
	c.Due += o.Due
	c.Unsent += o.Unsent
	c.UnsentInFlight += o.UnsentInFlight
	c.BytesRead += o.BytesRead
	c.BodyBytes += o.BodyBytes
	c.BytesWritten += o.BytesWritten
	c.StderrBytes += o.StderrBytes
	c.Late += o.Late
	c.Queued += o.Queued
	c.LateSum += o.LateSum
	c.LateMax = max(c.LateMax, o.LateMax)
	c.SchedMax = max(c.SchedMax, o.SchedMax)
}

// Failed returns the number of failed requests (every class but OK).
func (c *Counts) Failed() int64 {
	var n int64
	for _, v := range c.Failures[1:] {
		n += v
	}
	return n
}

// ClassCounts counts requests by failure class, indexed by load.ErrClass
// (the OK slot stays 0). In JSON it is an object keyed by class name.
type ClassCounts [load.NumClasses]int64

// Merge adds o to c.
func (c *ClassCounts) Merge(o *ClassCounts) {
	for i := range c {
		c[i] += o[i]
	}
}

// MarshalJSON writes the failure classes as an object by name.
func (c ClassCounts) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for cl := load.ErrClass(1); cl < load.NumClasses; cl++ {
		if cl > 1 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, cl.String())
		b = append(b, ':')
		b = strconv.AppendInt(b, c[cl], 10)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads the object MarshalJSON writes; an unknown class is
// an error.
func (c *ClassCounts) UnmarshalJSON(b []byte) error {
	var m map[string]int64
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*c = ClassCounts{}
	for k, v := range m {
		cl, ok := load.ParseErrClass(k)
		if !ok || cl == load.OK {
			return fmt.Errorf("stats: unknown failure class %q", k)
		}
		c[cl] = v
	}
	return nil
}

// Moments are the exact count, sum, sum of squares, minimum and maximum of
// one phase's durations. They merge exactly: the sums are integers (the sum
// of squares in 128 bits).
type Moments struct {
	N     int64
	Sum   time.Duration
	SumSq Uint128 // of nanoseconds squared
	Min   time.Duration
	Max   time.Duration
}

// Add adds one value, in nanoseconds.
func (m *Moments) Add(v int64) {
	if m.N == 0 || time.Duration(v) < m.Min {
		m.Min = time.Duration(v)
	}
	if time.Duration(v) > m.Max {
		m.Max = time.Duration(v)
	}
	m.N++
	m.Sum += time.Duration(v)
	a := uint64(v)
	if v < 0 {
		a = uint64(-v)
	}
	hi, lo := bits.Mul64(a, a)
	m.SumSq.add(Uint128{hi, lo})
}

// Merge adds o to m.
func (m *Moments) Merge(o *Moments) {
	if o.N == 0 {
		return
	}
	if m.N == 0 || o.Min < m.Min {
		m.Min = o.Min
	}
	if m.N == 0 || o.Max > m.Max {
		m.Max = o.Max
	}
	m.N += o.N
	m.Sum += o.Sum
	m.SumSq.add(o.SumSq)
}

// Mean returns the mean (0 without values).
func (m *Moments) Mean() time.Duration {
	if m.N == 0 {
		return 0
	}
	return time.Duration(float64(m.Sum) / float64(m.N))
}

// SD returns the sample standard deviation (0 for fewer than two values).
func (m *Moments) SD() time.Duration {
	if m.N < 2 {
		return 0
	}
	mean := float64(m.Sum) / float64(m.N)
	v := (m.SumSq.Float() - float64(m.Sum)*mean) / float64(m.N-1)
	if v <= 0 {
		return 0
	}
	return time.Duration(math.Sqrt(v))
}

// Uint128 is an unsigned 128-bit integer (Hi·2⁶⁴ + Lo); in JSON, a decimal
// string.
type Uint128 struct{ Hi, Lo uint64 }

func (u *Uint128) add(o Uint128) {
	var c uint64
	u.Lo, c = bits.Add64(u.Lo, o.Lo, 0)
	u.Hi, _ = bits.Add64(u.Hi, o.Hi, c)
}

// Float returns u as a float64.
func (u Uint128) Float() float64 { return float64(u.Hi)*(1<<64) + float64(u.Lo) }

func (u Uint128) big() *big.Int {
	b := new(big.Int).SetUint64(u.Hi)
	return b.Lsh(b, 64).Or(b, new(big.Int).SetUint64(u.Lo))
}

// MarshalJSON writes u as a decimal string.
func (u Uint128) MarshalJSON() ([]byte, error) {
	return strconv.AppendQuote(nil, u.big().String()), nil
}

// UnmarshalJSON reads a decimal string.
func (u *Uint128) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return fmt.Errorf("stats: want a decimal string, got %s", b)
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || v.Sign() < 0 || v.BitLen() > 128 {
		return fmt.Errorf("stats: bad 128-bit integer %q", s)
	}
	lo := new(big.Int).And(v, new(big.Int).SetUint64(^uint64(0)))
	*u = Uint128{Hi: new(big.Int).Rsh(v, 64).Uint64(), Lo: lo.Uint64()}
	return nil
}

// PhaseRecord is one phase's durations: exact moments and an HDR histogram
// of microseconds (3 significant digits from 1 µs to 1 hour). In JSON the
// histogram is hdrhistogram's own V2 compressed encoding (base64).
//
// A live run records into Hist, a dense histogram (one counter per bucket,
// about 180 KB at 3 digits: the cost of a constant-time record). A phase
// read from JSON keeps its counts sparse instead (hdr.PackedHistogram: only
// the populated buckets, about the size of the encoding), so that reading
// and merging thousands of saved records takes memory in proportion to
// their buckets, not 200 times their size; Hist is then nil.
type PhaseRecord struct {
	Moments
	Hist *hdr.Histogram

	sparse *hdr.PackedHistogram
}

type phaseJSON struct {
	Count int64         `json:"count"`
	Sum   time.Duration `json:"sum_ns"`
	SumSq Uint128       `json:"sum_squares_ns2"`
	Min   time.Duration `json:"min_ns"`
	Max   time.Duration `json:"max_ns"`
	Hist  string        `json:"histogram_us"`
}

// MarshalJSON writes the moments and the encoded histogram.
func (p PhaseRecord) MarshalJSON() ([]byte, error) {
	var enc []byte
	var err error
	switch {
	case p.Hist != nil:
		enc, err = p.Hist.Encode(hdr.V2CompressedEncodingCookieBase)
	case p.sparse != nil:
		enc, err = p.sparse.Encode()
	default:
		enc, err = hdr.NewPacked(HistMin, HistMax, HistSigFigs).Encode()
	}
	if err != nil {
		return nil, fmt.Errorf("stats: encoding a histogram: %w", err)
	}
	m := p.Moments
	return json.Marshal(phaseJSON{Count: m.N, Sum: m.Sum, SumSq: m.SumSq, Min: m.Min, Max: m.Max, Hist: string(enc)})
}

// UnmarshalJSON reads what MarshalJSON writes, keeping the histogram
// sparse.
func (p *PhaseRecord) UnmarshalJSON(b []byte) error {
	var j phaseJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if err := checkHistHeader(j.Hist); err != nil {
		return err
	}
	h, err := hdr.DecodePacked([]byte(j.Hist))
	if err != nil {
		return fmt.Errorf("stats: decoding a histogram: %w", err)
	}
	if h.TotalCount() != j.Count {
		return fmt.Errorf("stats: histogram holds %d values, count says %d", h.TotalCount(), j.Count)
	}
	*p = PhaseRecord{Moments: Moments{N: j.Count, Sum: j.Sum, SumSq: j.SumSq, Min: j.Min, Max: j.Max}, sparse: h}
	return nil
}

// checkHistHeader refuses an encoded histogram whose header asks for other
// bounds than backbench writes (1 µs to HistMax, at most HistSigFigs digits):
// a decoder sizes its counts by the header's range, so a hostile file
// could otherwise claim a range of many gigabytes. Only the base64 text and
// the 40-byte header inside the zlib stream are read here.
func checkHistHeader(enc string) error {
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || len(raw) < 8 {
		return errors.New("stats: decoding a histogram: not a V2 compressed histogram")
	}
	z, err := zlib.NewReader(bytes.NewReader(raw[8:]))
	if err != nil {
		return fmt.Errorf("stats: decoding a histogram: %w", err)
	}
	defer z.Close()
	var head struct {
		Cookie, PayloadLen, Offset, SigFigs int32
		Lowest, Highest                     int64
	}
	if err := binary.Read(z, binary.BigEndian, &head); err != nil {
		return fmt.Errorf("stats: decoding a histogram: header: %w", err)
	}
	if head.Lowest != HistMin || head.Highest < HistMin || head.Highest > HistMax || head.SigFigs < 1 || head.SigFigs > HistSigFigs {
		return fmt.Errorf("stats: histogram bounds %d..%d µs at %d digits: backbench writes 1..%d µs at up to %d digits",
			head.Lowest, head.Highest, head.SigFigs, int64(HistMax), HistSigFigs)
	}
	return nil
}

// Merge adds o to p. Into a phase that has no histogram yet, a sparse o
// is cloned, so that a merge of saved records stays sparse throughout;
// into a dense one, counts are added bucket by bucket. Neither decodes a
// sparse histogram densely.
func (p *PhaseRecord) Merge(o *PhaseRecord) {
	p.Moments.Merge(&o.Moments)
	switch {
	case o.sparse != nil:
		switch {
		case p.Hist != nil:
			o.sparse.MergeInto(p.Hist)
		case p.sparse == nil:
			p.sparse = o.sparse.Clone()
		default:
			p.sparse.Merge(o.sparse)
		}
	case o.Hist != nil:
		switch {
		case p.Hist != nil:
			p.Hist.Merge(o.Hist)
		case p.sparse != nil:
			p.sparse.MergeFrom(o.Hist)
		default:
			p.Hist = hdr.New(o.Hist.LowestTrackableValue(), o.Hist.HighestTrackableValue(), int(o.Hist.SignificantFigures()))
			p.Hist.Merge(o.Hist)
		}
	}
}

// Histogram returns the phase's histogram as a dense hdr.Histogram: Hist
// itself, or a dense copy of the sparse counts of a phase read from JSON
// (an empty histogram when there is neither).
func (p *PhaseRecord) Histogram() *hdr.Histogram {
	switch {
	case p.Hist != nil:
		return p.Hist
	case p.sparse != nil:
		h := hdr.New(p.sparse.LowestTrackableValue(), p.sparse.HighestTrackableValue(), int(p.sparse.SignificantFigures()))
		p.sparse.MergeInto(h)
		return h
	}
	return NewHistogram()
}

// ValueAt returns the HDR estimate of the q-th percentile (0..100), in µs.
func (p *PhaseRecord) ValueAt(q float64) int64 {
	switch {
	case p.Hist != nil:
		return p.Hist.ValueAtQuantile(q)
	case p.sparse != nil:
		return p.sparse.ValueAtPercentile(q)
	}
	return 0
}

// Quantile returns the q-th percentile (0..100). The top (q = 100) is the
// exact maximum and the bottom the exact minimum; other values are HDR
// estimates clamped to them.
func (p *PhaseRecord) Quantile(q float64) time.Duration {
	m := &p.Moments
	switch {
	case m.N == 0:
		return 0
	case q >= 100:
		return m.Max
	case q <= 0:
		return m.Min
	}
	v := time.Duration(p.ValueAt(q)) * time.Microsecond
	return min(max(v, m.Min), m.Max)
}

// NewHistogram returns an empty dense histogram of a phase: microseconds
// from HistMin to HistMax at HistSigFigs digits.
func NewHistogram() *hdr.Histogram { return hdr.New(HistMin, HistMax, HistSigFigs) }

// Phases holds the PhaseRecord of every ab phase, indexed by Phase. In
// JSON it is an object keyed by phase name; the open model's phases
// (scheduled, client_late) are written only when they hold values.
type Phases [numPhases]PhaseRecord

var phaseNames = [numPhases]string{"connect", "processing", "waiting", "total", "scheduled", "client_late"}

// String returns the phase's name, as in the record's JSON keys.
func (p Phase) String() string {
	if p >= 0 && p < numPhases {
		return phaseNames[p]
	}
	return "unknown"
}

// MarshalJSON writes the phases by name.
func (ps Phases) MarshalJSON() ([]byte, error) {
	m := map[string]PhaseRecord{}
	for p := range ps {
		if Phase(p) >= PhaseScheduled && ps[p].N == 0 {
			continue
		}
		m[phaseNames[p]] = ps[p]
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads the phases by name; a missing phase is empty.
func (ps *Phases) UnmarshalJSON(b []byte) error {
	var m map[string]PhaseRecord
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for p := range ps {
		ps[p] = PhaseRecord{}
		if v, ok := m[phaseNames[p]]; ok {
			ps[p] = v
			delete(m, phaseNames[p])
		}
	}
	for k := range m {
		return fmt.Errorf("stats: unknown phase %q", k)
	}
	return nil
}

// UpstreamRecord is the part of a run that went to one address of a
// cluster target.
type UpstreamRecord struct {
	// Address is the upstream's address.
	Address string `json:"address"`
	// Complete and Failed count its requests as the whole run does.
	Complete int64 `json:"complete"`
	Failed   int64 `json:"failed"`
	// Total is the total time of its complete requests.
	Total PhaseRecord `json:"total"`
}

// TargetRecord is the part of a run that sent one request of a mix.
type TargetRecord struct {
	// Target is the request, "METHOD URL".
	Target string `json:"target"`
	// Requests counts its requests that finished (complete or failed,
	// a length failure once); Complete and Failed count them as the
	// whole run does.
	Requests int64 `json:"requests"`
	Complete int64 `json:"complete"`
	Failed   int64 `json:"failed"`
	// BodyBytes counts the body bytes of its complete responses.
	BodyBytes int64 `json:"body_bytes"`
	// Total is the total time of its complete requests.
	Total PhaseRecord `json:"total"`
}

// Replay describes an access log replayed (--access-log): the targets
// are its distinct requests, weighted by their counts, sent in its order.
type Replay struct {
	// File is the log's name ("stdin" for -), Format its format
	// ("combined", "common" or an nginx log_format string), Methods the
	// methods replayed.
	File    string   `json:"file"`
	Format  string   `json:"format"`
	Methods []string `json:"methods"`
	// Lines counts its non-blank lines, Replayed those sent in order,
	// Skipped the well-formed ones not sent (another method, no request,
	// not a path, a rare target past the most frequent 1,000), Malformed
	// those not read.
	Lines     int64 `json:"lines"`
	Replayed  int64 `json:"replayed"`
	Skipped   int64 `json:"skipped"`
	Malformed int64 `json:"malformed"`
	// FirstBadLine is the line of the first skipped or malformed line (0
	// when none), FirstBadWhy what was wrong with it.
	FirstBadLine int    `json:"first_bad_line,omitempty"`
	FirstBadWhy  string `json:"first_bad_why,omitempty"`
	// Truncated reports a log longer than the replay's limit (4,194,304
	// lines): the rest was not read.
	Truncated bool `json:"truncated,omitempty"`
}

// TargetSigFigs is the significant digits of the histogram of a target of
// a mix (TargetRecord.Total): 2, each value within 1% (a bucket at most
// 1/128 of its value wide; exact to the µs below 256 µs), from HistMin to
// HistMax like a phase's.
const TargetSigFigs = 2

// SparsePhase returns the phase of moments m whose histogram is h (µs,
// HistMin to HistMax), kept sparse as a phase read back from JSON is: its
// memory is its populated buckets. h must hold m.N values; the phase owns
// it after.
func SparsePhase(m Moments, h *hdr.PackedHistogram) PhaseRecord {
	return PhaseRecord{Moments: m, sparse: h}
}

// Cause counts the failures of one class and kind, with the message of the
// first one.
type Cause struct {
	Class   load.ErrClass `json:"class"`
	Kind    load.Kind     `json:"kind"`
	Count   int64         `json:"count"`
	Message string        `json:"message"`
}

// PhaseCount returns how many values phase p holds.
func (r *Record) PhaseCount(p Phase) int64 { return r.Phases[p].N }

// Rows returns the kept raw rows (nil unless recorder.Options.KeepRows); they are
// not part of the JSON form.
func (r *Record) Rows() []RawRow { return r.rows }

// AsSaved returns r as its saved form holds it (nil for nil): a shallow
// copy without what JSON does not keep (the kept rows, the raw file's
// error, the windows, the unreachable error), so that what is derived
// from it in memory (SummaryOf: ab's arithmetic from the rows with
// Plan.ABCompat) is what is derived from the file.
func (r *Record) AsSaved() *Record {
	if r == nil {
		return nil
	}
	c := *r
	c.rows, c.rawErr, c.Windows, c.WindowWidth, c.Unreachable = nil, nil, nil, 0, nil
	return &c
}

// RawErr returns the first error writing the raw file, if any.
func (r *Record) RawErr() error { return r.rawErr }

// SetRows sets the kept raw rows (the recorder's, at its Merge).
func (r *Record) SetRows(rows []RawRow) { r.rows = rows }

// SetRawErr sets the first error writing the raw file (the recorder's, at
// its Merge).
func (r *Record) SetRawErr(err error) { r.rawErr = err }

// CauseCount returns how many failures were of kind k, whatever their
// class.
func (r *Record) CauseCount(k load.Kind) int64 {
	var n int64
	for _, c := range r.Causes {
		if c.Kind == k {
			n += c.Count
		}
	}
	return n
}

// Validate checks a record read from a file: its schema is this
// backbench's, no count, sum or duration is negative, no rate is NaN or
// infinite, a phase's minimum is not above its maximum, and the failures
// by class add up within int64. The error names the field, by its JSON
// key, and its value.
func (r *Record) Validate() error {
	switch {
	case r.Schema > Schema:
		return fmt.Errorf("schema %d is newer than this backbench's (%d); use a newer backbench", r.Schema, Schema)
	case r.Schema < 1:
		return fmt.Errorf("schema %d: not a backbench record schema (want %d)", r.Schema, Schema)
	}
	neg := func(name string, v int64) error {
		if v < 0 {
			return fmt.Errorf("%s is %d: a saved count, sum or duration is never negative", name, v)
		}
		return nil
	}
	var zero Counts
	errs := []error{neg("plan.concurrency", int64(r.Plan.Concurrency)), neg("plan.requests", r.Plan.Requests),
		neg("plan.time_limit_ns", int64(r.Plan.Duration)), neg("plan.timeout_ns", int64(r.Plan.Timeout)),
		neg("plan.body_bytes", r.Plan.BodySize), neg("elapsed_ns", int64(r.Elapsed)),
		neg("document_length", r.DocumentLength)}
	if v := r.Plan.Rate; math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		errs = append(errs, fmt.Errorf("plan.rate is %g: want a finite rate of 0 or more", v))
	}
	for _, f := range countFields(&r.Counts, &zero) {
		errs = append(errs, neg("counts."+f.name, *f.a))
	}
	var failed int64
	for cl := load.ErrClass(1); cl < load.NumClasses; cl++ {
		v := r.Counts.Failures[cl]
		errs = append(errs, neg("counts.failures."+cl.String(), v))
		if v > 0 && failed > math.MaxInt64-v {
			errs = append(errs, fmt.Errorf("counts.failures: the classes add up beyond a 64-bit count"))
		}
		failed += max(v, 0)
	}
	phase := func(name string, m *Moments) {
		errs = append(errs, neg(name+".count", m.N), neg(name+".sum_ns", int64(m.Sum)),
			neg(name+".min_ns", int64(m.Min)), neg(name+".max_ns", int64(m.Max)))
		if m.N > 0 && m.Min > m.Max {
			errs = append(errs, fmt.Errorf("%s: min_ns %d is above max_ns %d", name, m.Min, m.Max))
		}
	}
	for p := range r.Phases {
		phase("phases."+phaseNames[p], &r.Phases[p].Moments)
	}
	for i := range r.Upstreams {
		u := &r.Upstreams[i]
		errs = append(errs, neg(fmt.Sprintf("upstreams[%d].complete", i), u.Complete), neg(fmt.Sprintf("upstreams[%d].failed", i), u.Failed))
		phase(fmt.Sprintf("upstreams[%d].total", i), &u.Total.Moments)
	}
	for i := range r.Targets {
		u := &r.Targets[i]
		errs = append(errs, neg(fmt.Sprintf("targets[%d].requests", i), u.Requests), neg(fmt.Sprintf("targets[%d].complete", i), u.Complete), neg(fmt.Sprintf("targets[%d].failed", i), u.Failed),
			neg(fmt.Sprintf("targets[%d].body_bytes", i), u.BodyBytes))
		phase(fmt.Sprintf("targets[%d].total", i), &u.Total.Moments)
	}
	if len(r.Targets) > 0 && len(r.Targets) != len(r.Plan.Targets) {
		errs = append(errs, fmt.Errorf("targets: %d parts for %d targets in the plan", len(r.Targets), len(r.Plan.Targets)))
	}
	for i, c := range r.Causes {
		errs = append(errs, neg(fmt.Sprintf("causes[%d].count", i), c.Count))
	}
	for i, e := range r.ErrorSamples {
		errs = append(errs, neg(fmt.Sprintf("error_samples[%d].count", i), e.Count))
	}
	if r.ListenOverflows != nil {
		errs = append(errs, neg("listen_overflows", *r.ListenOverflows))
	}
	if r.ListenDrops != nil {
		errs = append(errs, neg("listen_drops", *r.ListenDrops))
	}
	if r.Timeline != nil {
		errs = append(errs, r.Timeline.Validate())
	}
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func sortCauses(cs []Cause) {
	slices.SortFunc(cs, func(a, b Cause) int {
		if a.Class != b.Class {
			return int(a.Class) - int(b.Class)
		}
		return int(a.Kind) - int(b.Kind)
	})
}

// SortedSamples turns message counts into ErrorSamples, most frequent
// first (then by message).
func SortedSamples(m map[string]int64) []ErrorSample {
	out := []ErrorSample{}
	for msg, n := range m {
		out = append(out, ErrorSample{Message: msg, Count: n})
	}
	slices.SortFunc(out, func(a, b ErrorSample) int {
		if a.Count != b.Count {
			if a.Count > b.Count {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Message, b.Message)
	})
	return out
}

// ListenQueue is what the kernel kept of one of the target's own listening
// sockets during a run (sockets.TCPListener, sockets.UnixListener).
type ListenQueue struct {
	// Address is the socket's address as a target names it
	// ("tcp:127.0.0.1:9000", "unix:/run/php/fpm.sock").
	Address string `json:"address"`
	// Backlog is its listen backlog (ss -l's Send-Q).
	Backlog int `json:"backlog"`
	// PeakQueued is the most connections seen waiting in its accept queue,
	// sampled every 10 ms and at both ends of the run.
	PeakQueued int `json:"peak_queued"`
	// Drops is the rise, during the run, of the socket's own count of
	// connection attempts it dropped (a full accept queue, mostly); nil
	// where the kernel keeps none (Unix sockets refuse with EAGAIN).
	Drops *int64 `json:"drops,omitempty"`
}

// CheckSchema checks the raw JSON value of a record's "schema" key (nil:
// the key is missing): a whole number from 1 to Schema, so that a string
// ("1"), a fraction, a huge number (1e308), 0 or a negative schema is
// refused with a message naming the value, before the record is read.
func CheckSchema(raw json.RawMessage) error {
	if raw == nil {
		return errors.New("schema: missing (not a backbench record)")
	}
	v, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	switch {
	case err != nil:
		return fmt.Errorf("schema %s: want a whole number from 1 to %d", raw, Schema)
	case v > Schema:
		return fmt.Errorf("schema %d is newer than this backbench's (%d); use a newer backbench", v, Schema)
	case v < 1:
		return fmt.Errorf("schema %d: want a whole number from 1 to %d", v, Schema)
	}
	return nil
}

// Environment is where a run was made: the machine and the build of
// backbench.
type Environment struct {
	// Hostname is the machine's host name ("" with --no-hostname).
	Hostname string `json:"hostname"`
	// Kernel is the kernel release, as uname -r prints it.
	Kernel string `json:"kernel"`
	// CPUModel is the first "model name" of /proc/cpuinfo.
	CPUModel string `json:"cpu_model"`
	// CPUs is the number of CPUs the process may use.
	CPUs int `json:"cpus"`
	// Version is backbench's version.
	Version string `json:"version"`
	// GoVersion is the Go release backbench was built with.
	GoVersion string `json:"go_version"`
	// Command is the command line, as an argv array, with its credentials
	// replaced by load.Redacted unless --keep-secrets (Privacy).
	Command []string `json:"command"`
	// Engine is the engine that ran the workers: "poller" or "uring"
	// (empty in records made before engines were chosen).
	Engine string `json:"engine,omitempty"`
}

// Privacy says what an Environment leaves out, so that a result file is
// safe to share. The zero value redacts credentials and keeps the host name.
type Privacy struct {
	// KeepSecrets keeps the credentials of the command line (--keep-secrets):
	// for a private file only.
	KeepSecrets bool
	// NoHostname leaves the host name out (--no-hostname).
	NoHostname bool
	// ValueShorts lists the one-letter flags that take a value, for
	// load.RedactArgs ("": load.DefaultValueShorts).
	ValueShorts string
}

// Apply makes e follow p: the command's credentials replaced by
// load.Redacted unless p.KeepSecrets, the host name emptied if
// p.NoHostname. It is applied again to the environments of saved files
// that are written anew (merge), since they may come from older versions.
func (p Privacy) Apply(e *Environment) {
	if !p.KeepSecrets && e.Command != nil {
		e.Command = load.RedactArgs(e.Command, p.ValueShorts)
	}
	if p.NoHostname {
		e.Hostname = ""
	}
}

// URL returns a URL (or a label that holds one) as p shows it: its
// credentials (load.RedactURL: the password of its user information, the
// values of its query parameters that load.SecretQuery marks) replaced by
// load.Redacted unless p.KeepSecrets. A string without "://" is returned
// as it is.
func (p Privacy) URL(s string) string {
	if p.KeepSecrets || !strings.Contains(s, "://") {
		return s
	}
	return load.RedactURL(s)
}

// ApplyPlan makes a record's plan follow p: the credentials of its target
// URL and of its document path's query replaced by load.Redacted unless
// p.KeepSecrets. A run's plan is recorded so already (execute.Plan.Record);
// this is applied again to the plans of saved files written anew (merge),
// which may come from older versions.
func (p Privacy) ApplyPlan(pl *Plan) {
	if p.KeepSecrets {
		return
	}
	pl.Target.URL = p.URL(pl.Target.URL)
	pl.Path = load.RedactQuery(pl.Path)
}

// CommandLine is the command line "backbench CMD ARGS..." as a shell
// would take it back, for a report others read (the Markdown of bench,
// sweep and compare): arguments with spaces or shell characters in single
// quotes, credentials replaced by load.Redacted unless p.KeepSecrets
// (load.RedactArgs).
func (p Privacy) CommandLine(cmd string, args []string) string {
	if !p.KeepSecrets {
		args = load.RedactArgs(args, p.ValueShorts)
	}
	words := []string{"backbench", cmd}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}

// CurrentEnvironment describes this machine and process, with the
// credentials of the command line redacted (Privacy's zero value). version
// is backbench's version; empty, it is read from the build information.
func CurrentEnvironment(version string) Environment {
	return CurrentEnvironmentFor(version, Privacy{})
}

// CurrentEnvironmentFor is CurrentEnvironment under the privacy p.
func CurrentEnvironmentFor(version string, p Privacy) Environment {
	e := Environment{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), Version: version,
		Command: append([]string(nil), os.Args...)}
	e.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.Kernel = strings.TrimSpace(string(b))
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				e.CPUModel = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if e.Version == "" {
		e.Version = "(devel)"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
			e.Version = bi.Main.Version
		}
	}
	p.Apply(&e)
	return e
}

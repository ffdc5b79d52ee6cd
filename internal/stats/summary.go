// ab's figures derived from a run's Record: the Summary, its parts and
// methods, the verdicts added to it (SLOResult), a run with its summary
// (Run), and what the summary takes from the timeline (the worst window,
// the stages).

package stats

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/backbench/backbench/internal/load"
)

// Percentiles are the ranks of ab's percentile table.
var Percentiles = []int{50, 66, 75, 80, 90, 95, 98, 99, 100}

// UpstreamSummary is one address of a cluster target.
type UpstreamSummary struct {
	Address           string  `json:"address"`
	Requests          int64   `json:"requests"`
	Complete          int64   `json:"complete_requests"`
	Failed            int64   `json:"failed_requests"`
	RequestsPerSecond float64 `json:"requests_per_second"`
	MeanMs            float64 `json:"mean_ms"`
	P99Ms             float64 `json:"p99_ms"`
}

// TargetSummary is one request of a mix (--targets): its counts and the
// percentiles of its complete requests' total time.
type TargetSummary struct {
	// Target is "METHOD URL" as the targets file gives it; Weight its
	// weight.
	Target string `json:"target"`
	Weight int    `json:"weight"`
	// Requests counts its finished requests (complete or failed, a
	// length failure once).
	Requests int64 `json:"requests"`
	Complete int64 `json:"complete_requests"`
	Failed   int64 `json:"failed_requests"`
	// P50Ms, P99Ms and MaxMs are its total times, in ms.
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	MaxMs float64 `json:"max_ms"`
	// BodyBytes counts the body bytes of its complete responses.
	BodyBytes int64 `json:"body_bytes"`
}

// OpenModel describes an open-model run.
type OpenModel struct {
	// RateAsked and RateAchieved are in requests per second (achieved:
	// requests sent over the run's time).
	RateAsked    float64 `json:"rate_asked"`
	RateAchieved float64 `json:"rate_achieved"`
	// LateRequests were sent more than 1 ms after their intended time;
	// LateMeanMs and LateMaxMs say by how much.
	LateRequests int64   `json:"late_requests"`
	LateMeanMs   float64 `json:"late_mean_ms"`
	LateMaxMs    float64 `json:"late_max_ms"`
	// CeilingLate of them were late because every worker was busy: the
	// in-flight ceiling (-c) was reached and held the rate back.
	CeilingLate int64 `json:"ceiling_late_requests"`
	// MeanInFlight is the mean number of requests in flight over the run,
	// by Little's law from what happened: completions per second × the
	// mean time a request took from send to done (s). In the open model
	// it stands where the closed model's -c does: the concurrency the
	// backend saw, of which -c is only the ceiling.
	MeanInFlight float64 `json:"mean_in_flight"`
	// SchedulerLateMaxMs is the worst lateness of a request whose worker
	// was free: the client's own timer or CPU lag.
	SchedulerLateMaxMs float64 `json:"scheduler_late_max_ms"`
	// ClientLatenessMs is the client's own pacing error: actual send time
	// minus intended start of the requests whose worker was free and
	// waiting (nil when there was none). The corrected latencies include it.
	ClientLatenessMs *Lateness `json:"client_lateness_ms"`
	// DueRequests is rate × the run's time as scheduled (at most -n);
	// UnsentRequests were due but got no outcome: never sent because the
	// run ended or -c was full, or cut off in flight at the end
	// (UnsentInFlight of them). complete + failed + unsent = due, a
	// Length failure counting once. Each unsent request enters the
	// corrected percentiles as if it completed at the end of the run.
	DueRequests    int64 `json:"due_requests"`
	UnsentRequests int64 `json:"unsent_requests"`
	UnsentInFlight int64 `json:"unsent_in_flight_requests"`
}

// Lateness is a distribution of a delay, in ms.
type Lateness struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// ClientDominatesFraction: when the client's lateness at p99 exceeds this
// fraction of the corrected p99, the corrected figures are said to be
// dominated by the client.
const ClientDominatesFraction = 0.1

// Failures counts failed requests per class.
type Failures struct {
	Connect    int64 `json:"connect"`
	Receive    int64 `json:"receive"`
	Length     int64 `json:"length"`
	Exceptions int64 `json:"exceptions"`
	Timeout    int64 `json:"timeout"`
	Protocol   int64 `json:"protocol"`
}

// failuresOf gives each class's count its JSON key. With ByClass, the only
// place besides package load that names the classes one by one.
func failuresOf(c ClassCounts) Failures {
	return Failures{Connect: c[load.Connect], Receive: c[load.Receive], Length: c[load.Length],
		Exceptions: c[load.Exceptions], Timeout: c[load.Timeout], Protocol: c[load.Protocol]}
}

// ByClass returns the counts indexed by class, for code that walks the
// classes (load.ErrClass(1) to load.NumClasses-1) instead of naming them.
func (f Failures) ByClass() ClassCounts {
	var c ClassCounts
	c[load.Connect], c[load.Receive], c[load.Length] = f.Connect, f.Receive, f.Length
	c[load.Exceptions], c[load.Timeout], c[load.Protocol] = f.Exceptions, f.Timeout, f.Protocol
	return c
}

// ConnectionTimes is ab's "Connection Times (ms)" table.
type ConnectionTimes struct {
	Connect    PhaseStats `json:"connect"`
	Processing PhaseStats `json:"processing"`
	Waiting    PhaseStats `json:"waiting"`
	Total      PhaseStats `json:"total"`
}

// Summary is the result of one run: everything the reporters print, as pure
// data. Times are in the unit their JSON key names.
type Summary struct {
	// Label names the series (bench --label): saved runs compare by it,
	// and it names their backend. Absent without --label.
	Label          string     `json:"label,omitempty"`
	Target         TargetInfo `json:"target"`
	ServerSoftware string     `json:"server_software"`
	ServerHostname string     `json:"server_hostname"`
	ServerPort     string     `json:"server_port"`
	DocumentPath   string     `json:"document_path"`
	DocumentLength int64      `json:"document_length"`
	VariableLength bool       `json:"variable_document_length"`
	Concurrency    int        `json:"concurrency_level"`
	Requests       int64      `json:"requests"`
	Method         string     `json:"method"`
	HTTPVersion    string     `json:"http_version,omitempty"`
	// ConnectionHeader is the Connection header sent (HTTP; absent when
	// none is sent).
	ConnectionHeader string   `json:"connection_header,omitempty"`
	KeepAlive        bool     `json:"keep_alive"`
	TimeTaken        float64  `json:"time_taken_seconds"`
	Complete         int64    `json:"complete_requests"`
	Failed           int64    `json:"failed_requests"`
	Failures         Failures `json:"failures"`
	Non2xx           int64    `json:"non_2xx_responses"`
	// Wire is what the protocol says of its requests, for the report
	// (nil for a record written before it).
	Wire *Wire `json:"wire,omitempty"`
	// KeepAliveRequests counts the responses after which the connection
	// stayed open: responses on a kept connection less those whose
	// connection the next request found closed by the server (Reconnects).
	KeepAliveRequests int64 `json:"keep_alive_requests"`
	Reconnects        int64 `json:"reconnects"`
	// Drained counts the requests in flight when the run's time limit
	// came: let finish (within -s), not counted in Complete or Failed nor
	// in any rate (see Counts.Drained); absent when 0.
	Drained          int64 `json:"drained_requests,omitempty"`
	TotalTransferred int64 `json:"total_transferred_bytes"`
	TotalBodySent    int64 `json:"total_body_sent_bytes"`
	HTMLTransferred  int64 `json:"html_transferred_bytes"`
	StderrBytes      int64 `json:"fcgi_stderr_bytes"`
	// StderrFirstLine is the first line of the first FastCGI STDERR
	// output ("Primary script unknown"); absent when there was none.
	StderrFirstLine   string  `json:"fcgi_stderr_first_line,omitempty"`
	RequestsPerSecond float64 `json:"requests_per_second"`
	// TimePerRequest is ab's c × time × 1000 / done in the closed model,
	// and the measured mean time per request in the open model (--rate),
	// where c is only a ceiling; both in ms.
	TimePerRequest    float64         `json:"time_per_request_ms"`
	TimePerRequestAll float64         `json:"time_per_request_all_ms"`
	TransferRate      float64         `json:"transfer_rate_kbytes_per_second"`
	ConnectionTimes   ConnectionTimes `json:"connection_times_ms"`
	// Percentiles maps ab's ranks ("50" ... "99", "100") to the total
	// time in ms; in the open model, from the intended start (corrected).
	Percentiles map[string]float64 `json:"percentiles_ms"`
	// UncorrectedPercentiles, in the open model, are the same ranks from
	// the actual send time.
	UncorrectedPercentiles map[string]float64 `json:"uncorrected_percentiles_ms,omitempty"`
	// Spectrum maps "50" ... "99.999" and "100" to the total time in ms
	// (corrected in the open model).
	Spectrum map[string]float64 `json:"percentile_spectrum_ms"`
	// Open is set in the open model (--rate).
	Open *OpenModel `json:"open_model,omitempty"`
	// ABCompat reports that ab's arithmetic was used for the connection
	// times and percentiles.
	ABCompat     bool          `json:"ab_compat"`
	Client       ClientHealth  `json:"client"`
	ErrorSamples []ErrorSample `json:"error_samples"`
	// Upstreams has one entry per address of a cluster target (--balance
	// says how connections were spread); absent for one address.
	Upstreams []UpstreamSummary `json:"upstreams,omitempty"`
	Balance   string            `json:"balance,omitempty"`
	// Targets has one entry per request of a mix (--targets), in the
	// targets file's order; absent for one request.
	Targets []TargetSummary `json:"targets,omitempty"`
	// Replay describes the access log the targets were read from
	// (--access-log): its lines replayed, skipped and malformed.
	Replay *Replay `json:"replay,omitempty"`
	// Backend is the backend's resource use, when sampled.
	Backend *BackendUsage `json:"backend,omitempty"`
	// TLS describes the negotiated TLS session of an https target.
	TLS *TLSInfo `json:"tls,omitempty"`
	// ConnectsOver1s counts completed requests whose connect took 1 s or
	// more: a SYN dropped by a full listen queue and retransmitted.
	ConnectsOver1s int64 `json:"connects_over_1s"`
	// ListenOverflows and ListenDrops are the rise of the kernel's
	// machine-wide TcpExt counters of the same names during the run; nil
	// when not read (the target is not a local TCP address).
	ListenOverflows *int64 `json:"listen_overflows"`
	ListenDrops     *int64 `json:"listen_drops"`
	// ListenBacklog is the listen backlog of a local target's socket (what
	// ss -ltn shows as Send-Q), when read.
	ListenBacklog *int `json:"listen_backlog,omitempty"`
	// ListenQueues are the target's own listening sockets as the kernel
	// keeps them (Record.ListenQueues): backlog, peak queue and drops.
	ListenQueues []ListenQueue `json:"listen_queues,omitempty"`
	// Notes name connection-level conditions met during the run (refused
	// connections, a full Unix backlog, port exhaustion, reconnects) and
	// their remedies.
	Notes       []string `json:"notes"`
	Interrupted bool     `json:"interrupted"`
	// BackendLost says when the backend stopped accepting connections
	// during the run; nil when it did not.
	BackendLost *BackendLost `json:"backend_lost"`
	// WorstWindow is the window of the run's timeline whose p99 stood
	// out from the median window's; absent when none did.
	WorstWindow *WorstWindow `json:"worst_window,omitempty"`
	// Stages are the figures of each stage of a run in stages (bench
	// --stages, --rate-stages); absent otherwise.
	Stages []StageSummary `json:"stages,omitempty"`
	// SLO holds the verdict on each objective given with --slo, in order;
	// absent without objectives.
	SLO []SLOResult `json:"slo_results,omitempty"`
	// Repeated is set on the result of repeated trials.
	*Repeated
}

// SLOResult is the verdict on one service level objective.
type SLOResult struct {
	// Objective is the objective as given ("p99<=50ms").
	Objective string `json:"objective"`
	// Value is the measured value in the objective's unit: ms for a
	// latency, percent for errors.
	Value float64 `json:"value"`
	// Pass reports Value <= the objective's bound.
	Pass bool `json:"pass"`
}

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

func phase(m *Record, p Phase) PhaseStats {
	ph := &m.Phases[p]
	if ph.N == 0 {
		return PhaseStats{}
	}
	return PhaseStats{Min: ms(ph.Min), Mean: float64(ph.Sum) / float64(ph.N) / 1e6, SD: ms(ph.SD()),
		Median: quantile(m, p, 50), Max: ms(ph.Max)}
}

// quantile returns the q-th percentile (0..100) of phase p in ms (see
// PhaseRecord.Quantile).
func quantile(m *Record, p Phase, q float64) float64 {
	ph := &m.Phases[p]
	if ph.N == 0 || q >= 100 || q <= 0 {
		return ms(ph.Quantile(q))
	}
	v := float64(ph.ValueAt(q)) / 1e3 // µs to ms
	return math.Min(math.Max(v, ms(ph.Min)), ms(ph.Max))
}

// Quantile returns the q-th percentile (0..100) of m's total time in ms.
func Quantile(m *Record, q float64) float64 { return quantile(m, PhaseTotal, q) }

// SummaryOf derives ab's figures from the record m. A run's own summary is
// derived once, when it is made, and kept in its Run.
func SummaryOf(m *Record) Summary {
	c := &m.Counts
	f := c.Failures
	pl := &m.Plan
	s := Summary{
		Target:            pl.Target,
		ServerSoftware:    m.ServerSoftware,
		ServerHostname:    pl.Hostname,
		ServerPort:        pl.Port,
		DocumentPath:      pl.Path,
		DocumentLength:    m.DocumentLength,
		VariableLength:    pl.VariableLength,
		Concurrency:       pl.Concurrency,
		Requests:          pl.Requests,
		Method:            pl.Method,
		HTTPVersion:       pl.HTTPVersion,
		ConnectionHeader:  pl.ConnectionHeader,
		Wire:              pl.Wire,
		KeepAlive:         pl.KeepAlive,
		TimeTaken:         m.Elapsed.Seconds(),
		Complete:          c.Complete,
		Failed:            c.Failed(),
		Non2xx:            c.Non2xx,
		KeepAliveRequests: max(c.KeepAlive-c.Reconnects, 0),
		Reconnects:        c.Reconnects,
		Drained:           c.Drained,
		TotalTransferred:  c.BytesRead,
		HTMLTransferred:   c.BodyBytes,
		StderrBytes:       c.StderrBytes,
		StderrFirstLine:   m.StderrFirstLine,
		Failures:          failuresOf(f),
		ConnectionTimes: ConnectionTimes{
			Connect:    phase(m, PhaseConnect),
			Processing: phase(m, PhaseProcessing),
			Waiting:    phase(m, PhaseWaiting),
			Total:      phase(m, PhaseTotal),
		},
		Percentiles:     map[string]float64{},
		ErrorSamples:    append([]ErrorSample{}, m.ErrorSamples...),
		Notes:           append([]string{}, m.Notes...),
		Interrupted:     m.Interrupted,
		Backend:         m.Backend,
		TLS:             m.TLS,
		BackendLost:     m.BackendLost,
		ListenOverflows: m.ListenOverflows,
		ListenDrops:     m.ListenDrops,
		ListenBacklog:   m.ListenBacklog,
		ListenQueues:    m.ListenQueues,
	}
	if pl.BodySize > 0 {
		s.TotalBodySent = c.BytesWritten
	}
	if s.TimeTaken > 0 && s.Complete > 0 {
		s.RequestsPerSecond = float64(s.Complete) / s.TimeTaken
		s.TimePerRequest = float64(s.Concurrency) * s.TimeTaken * 1000 / float64(s.Complete)
		s.TimePerRequestAll = s.TimeTaken * 1000 / float64(s.Complete)
	}
	if s.TimeTaken > 0 {
		s.TransferRate = float64(s.TotalTransferred) / 1024 / s.TimeTaken
	}
	latency := PhaseTotal
	if pl.Rate > 0 {
		latency = PhaseScheduled
	}
	s.Spectrum = map[string]float64{}
	if s.Complete > 0 {
		for _, p := range Percentiles {
			s.Percentiles[strconv.Itoa(p)] = quantile(m, latency, float64(p))
		}
		for _, p := range SpectrumRanks {
			s.Spectrum[strconv.FormatFloat(p, 'f', -1, 64)] = quantile(m, latency, p)
		}
	}
	if pl.Rate > 0 {
		s.UncorrectedPercentiles = map[string]float64{}
		for _, p := range Percentiles {
			s.UncorrectedPercentiles[strconv.Itoa(p)] = quantile(m, PhaseTotal, float64(p))
		}
		o := &OpenModel{RateAsked: pl.Rate, LateRequests: c.Late, CeilingLate: c.Queued,
			LateMaxMs: ms(c.LateMax), SchedulerLateMaxMs: ms(c.SchedMax),
			DueRequests: c.Due, UnsentRequests: c.Unsent, UnsentInFlight: c.UnsentInFlight}
		if m.Phases[PhaseClientLate].N > 0 {
			o.ClientLatenessMs = &Lateness{P50: quantile(m, PhaseClientLate, 50), P99: quantile(m, PhaseClientLate, 99),
				Max: quantile(m, PhaseClientLate, 100)}
		}
		if c.Late > 0 {
			o.LateMeanMs = float64(c.LateSum) / float64(c.Late) / 1e6
		}
		if s.TimeTaken > 0 {
			o.RateAchieved = float64(s.Finished()) / s.TimeTaken
		}
		// ab's "Time per request (mean)" is c × time / done, which is the
		// mean latency only when c requests are always in flight (the
		// closed model). In the open model -c is a ceiling, mostly not
		// reached: the line shows the mean time measured instead, and
		// the concurrency is the mean in flight by Little's law.
		if s.Complete > 0 && s.TimeTaken > 0 {
			mean := phase(m, PhaseTotal).Mean
			s.TimePerRequest = mean
			o.MeanInFlight = s.RequestsPerSecond * mean / 1000
		}
		s.Open = o
	}
	s.WorstWindow = worstWindow(m.Timeline)
	s.Stages = stageSummaries(pl, m.Timeline)
	if pl.ABCompat && len(m.Rows()) > 0 {
		s.ConnectionTimes, s.Percentiles = abArithmetic(m.Rows())
		s.ABCompat = true
	}
	if len(pl.Upstreams) > 1 && len(m.Upstreams) == len(pl.Upstreams) {
		s.Balance = pl.Balance
		for i, addr := range pl.Upstreams {
			u := &m.Upstreams[i]
			us := UpstreamSummary{Address: addr, Requests: u.Complete + u.Failed, Complete: u.Complete, Failed: u.Failed}
			if u.Total.N > 0 {
				us.MeanMs = float64(u.Total.Sum) / float64(u.Total.N) / 1e6
				us.P99Ms = math.Min(float64(u.Total.ValueAt(99))/1e3, ms(u.Total.Max))
			}
			if s.TimeTaken > 0 {
				us.RequestsPerSecond = float64(u.Complete) / s.TimeTaken
			}
			s.Upstreams = append(s.Upstreams, us)
		}
	}
	for i := range m.Targets {
		t := &m.Targets[i]
		ts := TargetSummary{Target: t.Target, Weight: 1, Requests: t.Requests, Complete: t.Complete, Failed: t.Failed,
			BodyBytes: t.BodyBytes}
		if i < len(pl.Weights) {
			ts.Weight = pl.Weights[i]
		}
		if t.Total.N > 0 {
			ts.P50Ms = math.Min(float64(t.Total.ValueAt(50))/1e3, ms(t.Total.Max))
			ts.P99Ms = math.Min(float64(t.Total.ValueAt(99))/1e3, ms(t.Total.Max))
			ts.MaxMs = ms(t.Total.Max)
		}
		s.Targets = append(s.Targets, ts)
	}
	if pl.Replay != nil {
		r := *pl.Replay
		s.Replay = &r
	}
	s.ConnectsOver1s = c.SlowConnects
	s.Client = m.Client
	s.Client.Warnings = append([]string{}, m.Client.Warnings...)
	if o := s.Open; o != nil && o.ClientLatenessMs != nil && s.Percentiles["99"] > 0 &&
		o.ClientLatenessMs.P99 > ClientDominatesFraction*s.Percentiles["99"] {
		s.Client.Warnings = append(s.Client.Warnings, fmt.Sprintf("the client sent requests %.3f ms late at p99, over a tenth of "+
			"the corrected p99 (%.3f ms): the corrected figures are dominated by the client, not the backend",
			o.ClientLatenessMs.P99, s.Percentiles["99"]))
	}
	return s
}

// SpectrumRanks are the ranks of the full percentile spectrum.
var SpectrumRanks = []float64{50, 75, 90, 95, 99, 99.9, 99.99, 99.999, 100}

// PercentileSpectrum returns m's total time in ms at every integer
// percentile from 0 to 100 (ab's -e file).
func PercentileSpectrum(m *Record) []float64 {
	out := make([]float64, 101)
	for i := range out {
		out[i] = Quantile(m, float64(i))
	}
	return out
}

// Finished is how many requests finished, completed or failed: a Length
// failure is complete too, so it counts once. It is the denominator of a
// failure ratio.
func (s *Summary) Finished() int64 {
	return s.Complete + s.Failed - s.Failures.Length
}

// ClosedEvery reports whether a keep-alive run's server closed the
// connection after every response: HTTP says "Connection: close", so
// nothing was counted as kept; a FastCGI server just closes, so every
// request after the first of a connection found it closed and was
// redialed. Pooled trials (Repeated) each opened their own first
// connections. False for a run without keep-alive or without a response.
func (s *Summary) ClosedEvery() bool {
	if !s.KeepAlive || s.Complete == 0 {
		return false
	}
	first := int64(s.Concurrency)
	if s.Repeated != nil && len(s.Trials) > 1 {
		first *= int64(len(s.Trials))
	}
	return s.KeepAliveRequests == 0 ||
		(s.Reconnects > 0 && s.Complete > first && s.Reconnects >= s.Complete-first)
}

// FailureRatio is the run's failure ratio, from 0 to 1: failed requests
// (any class) over the requests that finished (Finished: a Length
// failure counts once). It is 0 when nothing finished: no request failed.
// A non-2xx answer is a response, not a failure; ErrorRatio counts it.
// It is the one failure ratio of every report, chart, page and of
// sweep's stop rule (which, besides, stops at a level where nothing
// finished).
func (s *Summary) FailureRatio() float64 {
	finished := s.Finished()
	if finished <= 0 {
		return 0
	}
	return float64(s.Failed) / float64(finished)
}

// ErrorRatio is the share of finished requests that did not succeed,
// from 0 to 1: those that failed (any class) or answered a status other
// than 2xx, over Finished. It is 1 when nothing finished (a run with no
// answer meets no error bound). It is the figure of the "errors<=P%"
// objective (capacity, --slo); FailureRatio is the failure ratio.
func (s *Summary) ErrorRatio() float64 {
	finished := s.Finished()
	if finished <= 0 {
		return 1
	}
	return min(float64(s.Failed+s.Non2xx)/float64(finished), 1)
}

// ListenOverflow says whether the target's listen queue overflowed during
// the run, by the best figure the record has: the drops of the target's
// own listening sockets (ListenQueues, read through sock_diag) when it
// has them, and otherwise, for a record without them (a target that is
// not on this machine, or a file of an earlier version), the rise of the
// machine-wide TcpExt ListenOverflows counter, which every listener of the
// machine counts: machineWide says which. n is 0 when nothing overflowed
// or nothing was read.
func (s *Summary) ListenOverflow() (n int64, machineWide bool) {
	if len(s.ListenQueues) > 0 {
		for _, q := range s.ListenQueues {
			if q.Drops != nil {
				n += *q.Drops
			}
		}
		return n, false
	}
	if s.ListenOverflows != nil {
		return *s.ListenOverflows, true
	}
	return 0, false
}

// CheckSummary checks the figures of a saved Summary (a bench result or a
// sweep level, and its trials' records): no count is negative, and no time, rate,
// mean or percentile is negative, NaN or infinite. The error names the
// field by its JSON key.
func (s *Summary) CheckSummary() error {
	for _, c := range []struct {
		name string
		v    int64
	}{{"concurrency_level", int64(s.Concurrency)}, {"requests", s.Requests}, {"complete_requests", s.Complete},
		{"failed_requests", s.Failed}, {"non_2xx_responses", s.Non2xx}, {"keep_alive_requests", s.KeepAliveRequests},
		{"reconnects", s.Reconnects}, {"drained_requests", s.Drained}, {"total_transferred_bytes", s.TotalTransferred},
		{"html_transferred_bytes", s.HTMLTransferred}, {"document_length", s.DocumentLength}} {
		if c.v < 0 {
			return fmt.Errorf("%s is %d: a saved count is never negative", c.name, c.v)
		}
	}
	fin := func(name string, v float64) error {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("%s is %g: want a finite figure of 0 or more", name, v)
		}
		return nil
	}
	errs := []error{fin("time_taken_seconds", s.TimeTaken), fin("requests_per_second", s.RequestsPerSecond),
		fin("time_per_request_ms", s.TimePerRequest), fin("time_per_request_all_ms", s.TimePerRequestAll),
		fin("transfer_rate_kbytes_per_second", s.TransferRate)}
	for _, k := range slices.Sorted(maps.Keys(s.Percentiles)) {
		errs = append(errs, fin("percentiles_ms."+k, s.Percentiles[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(s.Spectrum)) {
		errs = append(errs, fin("percentile_spectrum_ms."+k, s.Spectrum[k]))
	}
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	if s.Repeated != nil {
		for i, t := range s.Trials {
			if t == nil {
				continue
			}
			if err := t.Validate(); err != nil {
				return fmt.Errorf("trials[%d].%v", i, err)
			}
		}
	}
	return nil
}

// Run is one run: its record and the record's own summary, derived once
// when the run was made (by the executor) and kept with it as a value,
// never a cache to invalidate: every reader of the run takes Summary.
type Run struct {
	// Record is the run's record.
	Record *Record
	// Summary is SummaryOf(Record), as the record was when the run ended.
	Summary Summary
}

// WorstWindow is the window of a run's timeline whose p99 latency stood
// out from the run's median window by more than the noise (StandsOut).
type WorstWindow struct {
	// Index is the window's index in the timeline.
	Index int `json:"index"`
	// StartSeconds and EndSeconds bound the window, in seconds from the
	// run's start.
	StartSeconds float64 `json:"start_seconds"`
	EndSeconds   float64 `json:"end_seconds"`
	// P99Ms and MaxMs are the window's p99 and maximum latency, in ms;
	// MedianP99Ms is the median of the p99 of the windows with a complete
	// request.
	P99Ms       float64 `json:"p99_ms"`
	MaxMs       float64 `json:"max_ms"`
	MedianP99Ms float64 `json:"median_p99_ms"`
	// RequestsPerSecond is the window's complete requests per second,
	// MedianRequestsPerSecond the median of the windows'.
	RequestsPerSecond       float64 `json:"requests_per_second"`
	MedianRequestsPerSecond float64 `json:"median_requests_per_second"`
	// Failed counts the window's failed requests.
	Failed int64 `json:"failed"`
}

// Noise bounds of WorstWindow: a window stands out when its p99 is more
// than StandsOutFactor times the median window's, and above it by at
// least StandsOutMinMs and StandsOutMADs median absolute deviations of
// the windows' p99, among at least 3 windows with complete requests.
const (
	StandsOutFactor = 3.0
	StandsOutMinMs  = 1.0
	StandsOutMADs   = 5.0
)

// worstWindow returns the timeline's window that stands out, nil when
// none does.
func worstWindow(tl *Timeline) *WorstWindow {
	if tl == nil || tl.Width <= 0 {
		return nil
	}
	i, median, ok := tl.Worst()
	if !ok {
		return nil
	}
	w := &tl.Windows[i]
	p99 := ms(w.Latency(99))
	width := tl.Width.Seconds()
	var rates, devs []float64
	for j := range tl.Windows {
		if x := &tl.Windows[j]; x.Complete > 0 {
			rates = append(rates, float64(x.Complete)/width)
			devs = append(devs, math.Abs(ms(x.Latency(99))-ms(median)))
		}
	}
	slices.Sort(rates)
	slices.Sort(devs)
	mad := devs[len(devs)/2]
	if p99 <= StandsOutFactor*ms(median) || p99-ms(median) < max(StandsOutMinMs, StandsOutMADs*mad) {
		return nil
	}
	return &WorstWindow{Index: i, StartSeconds: float64(i) * width, EndSeconds: float64(i+1) * width,
		P99Ms: p99, MaxMs: ms(w.LatencyMax), MedianP99Ms: ms(median),
		RequestsPerSecond: float64(w.Complete) / width, MedianRequestsPerSecond: rates[len(rates)/2], Failed: w.Failed()}
}

// StageSummary is what one stage of a run in stages (Plan.Stages)
// did, from the run's timeline: the windows that start within the stage.
type StageSummary struct {
	// StartSeconds and EndSeconds bound the stage, in seconds from the
	// run's start.
	StartSeconds float64 `json:"start_seconds"`
	EndSeconds   float64 `json:"end_seconds"`
	// Target is the stage's rate (open model) or concurrency (closed),
	// held or, with Ramp, reached at its end.
	Target float64 `json:"target"`
	Ramp   bool    `json:"ramp,omitempty"`
	// Complete and Failed count the requests of its windows;
	// RequestsPerSecond is Complete over the windows' span.
	Complete          int64   `json:"complete"`
	Failed            int64   `json:"failed"`
	RequestsPerSecond float64 `json:"requests_per_second"`
	// P50Ms and P99Ms are the latency percentiles of its windows' complete
	// requests (the timeline's histogram: within about 12%), MaxMs the
	// exact maximum, in ms.
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	MaxMs float64 `json:"max_ms"`
}

// stageSummaries returns the figures of each stage of the plan, nil for
// a run not in stages or without a timeline.
func stageSummaries(pl *Plan, tl *Timeline) []StageSummary {
	if len(pl.Stages) == 0 || tl == nil || tl.Width <= 0 {
		return nil
	}
	var out []StageSummary
	var from time.Duration
	for _, st := range pl.Stages {
		to := from + st.Length
		var sum TimelineWindow
		n := 0
		for i := range tl.Windows {
			if at := time.Duration(i) * tl.Width; at >= from && at < to {
				sum.Merge(&tl.Windows[i])
				n++
			}
		}
		s := StageSummary{StartSeconds: from.Seconds(), EndSeconds: to.Seconds(), Target: st.Target, Ramp: pl.Ramp,
			Complete: sum.Complete, Failed: sum.Failed(), P50Ms: ms(sum.Latency(50)), P99Ms: ms(sum.Latency(99)), MaxMs: ms(sum.LatencyMax)}
		if n > 0 {
			s.RequestsPerSecond = float64(sum.Complete) / (float64(n) * tl.Width.Seconds())
		}
		out = append(out, s)
		from = to
	}
	return out
}

package stats

import (
	"fmt"
	"time"
)

// MaxErrorSamples is how many distinct error messages a record keeps (the
// recorder's and a merge's).
const MaxErrorSamples = 8

// Histogram bounds of a phase, in microseconds, and its significant
// digits.
const (
	HistMin     = 1
	HistMax     = 3_600_000_000 // one hour
	HistSigFigs = 3
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

// RawRow is one completed request, kept only when the recorder is asked to
// keep rows (ab's -g file).
type RawRow struct {
	// Start is when the request began, in load.Now nanoseconds.
	Start int64
	// Connect, Processing, Waiting and Total are its ab phases.
	Connect, Processing, Waiting, Total time.Duration
}

// TargetInfo names what was measured.
type TargetInfo struct {
	// URL is the target as typed.
	URL string `json:"url"`
	// Protocol is "http" or "fcgi".
	Protocol string `json:"protocol"`
	// Network is "tcp" or "unix".
	Network string `json:"network"`
	// Address is host:port or the socket path.
	Address string `json:"address"`
}

// ClientHealth is the client's own resource use during a run.
type ClientHealth struct {
	// CPUUserSeconds and CPUSysSeconds are the process's CPU time.
	CPUUserSeconds float64 `json:"cpu_user_seconds"`
	CPUSysSeconds  float64 `json:"cpu_sys_seconds"`
	// CPUPercent is (user + sys) / wall time, in percent of one core; 0
	// for a run shorter than CPUShareMinSeconds.
	CPUPercent float64 `json:"cpu_percent"`
	// Cores is the number of CPUs the client may use.
	Cores int `json:"cores"`
	// Scheduling is the scheduling policy of the client's threads
	// (SCHED_BATCH or SCHED_OTHER).
	Scheduling string `json:"scheduling"`
	// TimeSliceMs is the custom time slice of the client's threads under
	// the fair scheduler, in ms (an open-model run sets 0.1 ms for its
	// pacer's wake-ups); 0 or absent: the kernel's default.
	TimeSliceMs float64 `json:"time_slice_ms,omitempty"`
	// CPUs are the CPUs every thread of the client was put on
	// (--client-cpus, a study's client_cpus); absent: not pinned, the
	// client ran wherever the kernel placed it.
	CPUs []int `json:"cpus,omitempty"`
	// Engine is the engine that ran the workers, as in the record's
	// environment ("" in records made before engines were chosen).
	Engine string `json:"engine,omitempty"`
	// SchedulerLateMaxMs is the worst wake-up delay of a 10 ms timer during
	// the run, in ms.
	SchedulerLateMaxMs float64 `json:"scheduler_late_max_ms"`
	// Warnings says when the client itself may have been the bottleneck.
	Warnings []string `json:"warnings"`
}

// Thresholds of the client health warnings.
const (
	// CPUWarnFraction of the cores in use warns of a saturated client.
	CPUWarnFraction = 0.9
	// SchedLateWarnMs of timer lateness warns of a starved scheduler.
	SchedLateWarnMs = 20.0
	// CPUShareMinSeconds is the shortest run whose CPU share (CPUPercent)
	// is measured: below it the CPU clock's granularity dominates, the
	// share is 0 in JSON and "-" in the text report.
	CPUShareMinSeconds = 0.1
)

// ErrorSample is one distinct error message and how often it was seen.
type ErrorSample struct {
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

// BackendLost is the moment a backend that had accepted connections
// refused them (or its Unix socket vanished) during a run.
type BackendLost struct {
	// AfterRequests is how many requests had completed by then.
	AfterRequests int64 `json:"after_requests"`
	// AtSeconds is when, in seconds from the start of the run.
	AtSeconds float64 `json:"at_seconds"`
	// Error is the dial's error in a user's words ("connection refused").
	Error string `json:"error"`
}

// String is the report's sentence for the loss.
func (b *BackendLost) String() string {
	return fmt.Sprintf("the backend stopped accepting connections after %d completed requests, at %.2f s: %s",
		b.AfterRequests, b.AtSeconds, b.Error)
}

// BackendUsage is the resource use of the backend's processes during a run,
// sampled from /proc (the given processes and all their descendants).
type BackendUsage struct {
	// PIDs are the root processes sampled.
	PIDs []int `json:"pids"`
	// CPUSeconds is user + system CPU time used during the run, including
	// that of children that exited and were waited for.
	CPUSeconds     float64 `json:"cpu_seconds"`
	CPUUserSeconds float64 `json:"cpu_user_seconds"`
	CPUSysSeconds  float64 `json:"cpu_sys_seconds"`
	// PeakRSSBytes and MeanRSSBytes are of the sum over the process tree.
	// RSS counts a page shared by several processes once in each.
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	MeanRSSBytes int64 `json:"mean_rss_bytes"`
	// PeakPSSBytes and MeanPSSBytes are of the tree's summed proportional
	// set size (each shared page divided among its sharers): the memory
	// the pool really uses. Where a process's smaps_rollup could not be
	// read, its RSS stands in and PSSFallback counts such readings.
	PeakPSSBytes int64 `json:"backend_peak_pss_bytes"`
	MeanPSSBytes int64 `json:"backend_mean_pss_bytes"`
	PSSFallback  int   `json:"pss_fallback_readings"`
	// USSMeanBytes and USSMaxBytes are per process: its unique set size
	// (private pages, what one more worker would cost), the mean over the
	// processes and samples and the largest seen.
	USSMeanBytes int64 `json:"uss_per_process_mean_bytes"`
	USSMaxBytes  int64 `json:"uss_per_process_max_bytes"`
	// ProcessesMax and ProcessesMean count the processes of the tree.
	ProcessesMax  int     `json:"processes_max"`
	ProcessesMean float64 `json:"processes_mean"`
	// Samples is how many times /proc was read.
	Samples int `json:"samples"`
	// FPMStatus holds php-fpm status fields read at the start and end of
	// the run (--fpm-status), by field name.
	FPMStatusStart map[string]string `json:"fpm_status_start,omitempty"`
	FPMStatusEnd   map[string]string `json:"fpm_status_end,omitempty"`
}

// TLSInfo is the TLS session of an https target, as ab prints it.
type TLSInfo struct {
	// Protocol is "TLSv1.3" or the like; Cipher the cipher suite name.
	Protocol string `json:"protocol"`
	Cipher   string `json:"cipher"`
	// TempKey is the key exchange group ("X25519"), when known.
	TempKey string `json:"server_temp_key,omitempty"`
	// ServerName is the SNI name sent.
	ServerName string `json:"server_name"`
	// Handshakes counts full and resumed TLS handshakes; Resumed those
	// that resumed an earlier session (tickets are shared by the workers).
	Handshakes int64 `json:"handshakes"`
	Resumed    int64 `json:"resumed_handshakes"`
}

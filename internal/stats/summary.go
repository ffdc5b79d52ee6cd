package stats

import (
	"sort"
	"strconv"

	"github.com/backbench/backbench/internal/load"
)

// Percentiles are the ranks of ab's percentile table.
var Percentiles = []int{50, 66, 75, 80, 90, 95, 98, 99, 100}

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

// RunInfo is what the runner and the command line know about a run.
type RunInfo struct {
	Target TargetInfo
	// Hostname, Port and Path are ab's "Server Hostname", "Server Port"
	// and "Document Path".
	Hostname, Port, Path string
	// Concurrency is the number of workers (-c).
	Concurrency int
	// Requests is the number of requests asked for (-n); 0 with a time
	// limit alone.
	Requests int64
	// KeepAlive reports -k.
	KeepAlive bool
	// HTTPVersion is "1.1" or "1.0" for HTTP targets, "" for FastCGI.
	HTTPVersion string
	// Method is the request method.
	Method string
	// BodySent is the request body size in bytes (0 without -p).
	BodySent int64
	// Elapsed is the run's wall time in nanoseconds.
	Elapsed int64
	// Interrupted reports a run stopped by a signal.
	Interrupted bool
}

// Failures counts failed requests per class.
type Failures struct {
	Connect    int64 `json:"connect"`
	Receive    int64 `json:"receive"`
	Length     int64 `json:"length"`
	Exceptions int64 `json:"exceptions"`
	Timeout    int64 `json:"timeout"`
	Protocol   int64 `json:"protocol"`
}

// ConnectionTimes is ab's "Connection Times (ms)" table.
type ConnectionTimes struct {
	Connect    PhaseStats `json:"connect"`
	Processing PhaseStats `json:"processing"`
	Waiting    PhaseStats `json:"waiting"`
	Total      PhaseStats `json:"total"`
}

// ErrorSample is one distinct error message and how often it was seen.
type ErrorSample struct {
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

// Summary is the result of one run: everything the reporters print, as pure
// data. Times are in the unit their JSON key names.
type Summary struct {
	Target            TargetInfo      `json:"target"`
	ServerSoftware    string          `json:"server_software"`
	ServerHostname    string          `json:"server_hostname"`
	ServerPort        string          `json:"server_port"`
	DocumentPath      string          `json:"document_path"`
	DocumentLength    int64           `json:"document_length"`
	VariableLength    bool            `json:"variable_document_length"`
	Concurrency       int             `json:"concurrency_level"`
	Requests          int64           `json:"requests"`
	Method            string          `json:"method"`
	HTTPVersion       string          `json:"http_version,omitempty"`
	KeepAlive         bool            `json:"keep_alive"`
	TimeTaken         float64         `json:"time_taken_seconds"`
	Complete          int64           `json:"complete_requests"`
	Failed            int64           `json:"failed_requests"`
	Failures          Failures        `json:"failures"`
	Non2xx            int64           `json:"non_2xx_responses"`
	KeepAliveRequests int64           `json:"keep_alive_requests"`
	Reconnects        int64           `json:"reconnects"`
	TotalTransferred  int64           `json:"total_transferred_bytes"`
	TotalBodySent     int64           `json:"total_body_sent_bytes"`
	HTMLTransferred   int64           `json:"html_transferred_bytes"`
	StderrBytes       int64           `json:"fcgi_stderr_bytes"`
	RequestsPerSecond float64         `json:"requests_per_second"`
	TimePerRequest    float64         `json:"time_per_request_ms"`
	TimePerRequestAll float64         `json:"time_per_request_all_ms"`
	TransferRate      float64         `json:"transfer_rate_kbytes_per_second"`
	ConnectionTimes   ConnectionTimes `json:"connection_times_ms"`
	// Percentiles maps ab's ranks ("50" ... "99", "100") to the total
	// time in ms.
	Percentiles  map[string]float64 `json:"percentiles_ms"`
	ErrorSamples []ErrorSample      `json:"error_samples"`
	Interrupted  bool               `json:"interrupted"`
}

// Summary reduces the merged records of a run to a Summary.
func (m *Merged) Summary(ri RunInfo) Summary {
	c := &m.counts
	f := c.failures
	s := Summary{
		Target:            ri.Target,
		ServerSoftware:    m.server,
		ServerHostname:    ri.Hostname,
		ServerPort:        ri.Port,
		DocumentPath:      ri.Path,
		DocumentLength:    m.docLen,
		VariableLength:    m.variable,
		Concurrency:       ri.Concurrency,
		Requests:          ri.Requests,
		Method:            ri.Method,
		HTTPVersion:       ri.HTTPVersion,
		KeepAlive:         ri.KeepAlive,
		TimeTaken:         float64(ri.Elapsed) / 1e9,
		Complete:          c.complete,
		Non2xx:            c.non2xx,
		KeepAliveRequests: c.keepAlive,
		Reconnects:        c.reconnects,
		TotalTransferred:  c.bytesRead,
		HTMLTransferred:   c.bodyBytes,
		StderrBytes:       c.stderrBytes,
		Failures: Failures{
			Connect: f[load.Connect], Receive: f[load.Receive], Length: f[load.Length],
			Exceptions: f[load.Exceptions], Timeout: f[load.Timeout], Protocol: f[load.Protocol],
		},
		ConnectionTimes: ConnectionTimes{
			Connect:    m.phase(PhaseConnect),
			Processing: m.phase(PhaseProcessing),
			Waiting:    m.phase(PhaseWaiting),
			Total:      m.phase(PhaseTotal),
		},
		Percentiles:  map[string]float64{},
		ErrorSamples: []ErrorSample{},
		Interrupted:  ri.Interrupted,
	}
	for _, n := range f {
		s.Failed += n
	}
	if ri.BodySent > 0 {
		s.TotalBodySent = c.bytesWritten
	}
	if s.TimeTaken > 0 && s.Complete > 0 {
		s.RequestsPerSecond = float64(s.Complete) / s.TimeTaken
		s.TimePerRequest = float64(s.Concurrency) * s.TimeTaken * 1000 / float64(s.Complete)
		s.TimePerRequestAll = s.TimeTaken * 1000 / float64(s.Complete)
	}
	if s.TimeTaken > 0 {
		s.TransferRate = float64(s.TotalTransferred) / 1024 / s.TimeTaken
	}
	if s.Complete > 0 {
		for _, p := range Percentiles {
			s.Percentiles[strconv.Itoa(p)] = m.Quantile(float64(p))
		}
	}
	for msg, n := range m.errSeen {
		s.ErrorSamples = append(s.ErrorSamples, ErrorSample{Message: msg, Count: n})
	}
	sort.Slice(s.ErrorSamples, func(i, j int) bool {
		a, b := s.ErrorSamples[i], s.ErrorSamples[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Message < b.Message
	})
	return s
}

// PercentileSpectrum returns the total time in ms at every integer
// percentile from 0 to 100 (ab's -e file).
func (m *Merged) PercentileSpectrum() []float64 {
	out := make([]float64, 101)
	for i := range out {
		out[i] = m.Quantile(float64(i))
	}
	return out
}

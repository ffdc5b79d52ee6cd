package fcgi

// The probe: what a FastCGI server really does at the protocol level. Each
// check opens a fresh connection (unless it is about reuse), sends a few
// records, and reports a verdict word, the evidence (what was sent and what
// came back or did not) and numbers. Every exchange is bounded by the
// timeout, so that a server that never answers costs at most one timeout per
// check, and every read is bounded in size (records are read into one fixed
// buffer; bodies are counted, not kept).

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/probe"
	"github.com/backbench/backbench/sockets"
)

// Probe defaults.
const (
	// DefaultProbeTimeout bounds one exchange of a check when
	// ProbeConfig.Timeout is 0: 5 s.
	DefaultProbeTimeout = 5 * time.Second
	// DefaultProbeMaxRequests bounds the max_requests_per_connection check
	// when ProbeConfig.MaxRequests is 0: 1000 requests.
	DefaultProbeMaxRequests = 1000
	// DefaultProbeMaxRequestsTime bounds the duration of that check when
	// ProbeConfig.MaxRequestsTime is 0: 10 s.
	DefaultProbeMaxRequestsTime = 10 * time.Second
	// probeSettle is the longest wait, after an answer, for the server to
	// close the connection (1 s, or the timeout if shorter).
	probeSettle = time.Second
	// maxSizesKept bounds the STDOUT record sizes listed in a result.
	maxSizesKept = 32
)

// Verdict words of the FastCGI checks. Where a check may end with another
// END_REQUEST protocolStatus, the verdict is that status's name
// (ProtocolStatus.String).
const (
	VerdictAnswered    = "answered"
	VerdictNoAnswer    = probe.VerdictNoAnswer
	VerdictClosed      = probe.VerdictClosed
	VerdictError       = probe.VerdictError
	VerdictHonored     = probe.VerdictHonored
	VerdictIgnored     = probe.VerdictIgnored
	VerdictMeasured    = probe.VerdictMeasured
	VerdictNotReached  = probe.VerdictNotReached
	VerdictSupported   = probe.VerdictSupported
	VerdictUnsolicited = probe.VerdictUnsolicited
	VerdictRejected    = "rejected"
	VerdictLost        = "lost"
	VerdictServed      = "served"
	VerdictNotServed   = "not served"
	VerdictMixed       = "mixed"
	VerdictUnknownRole = "UNKNOWN_ROLE"
	VerdictUnknownType = "UNKNOWN_TYPE"
	VerdictEndRequest  = "END_REQUEST"
	VerdictSkipped     = probe.VerdictSkipped
)

// ProbeUnknownName is the variable name, unknown to every server, that the
// get_values check asks for besides the three of the specification.
const ProbeUnknownName = "BACKBENCH_PROBE_UNKNOWN"

// ProbeUnknownType is the management record type of the unknown_type check:
// 12, the first one FastCGI 1.0 leaves undefined.
const ProbeUnknownType RecType = 12

// ProbeUnknownRole is the role of the unknown_role check: 9.
const ProbeUnknownRole = 9

// ProbeConfig describes a probe of one FastCGI server.
type ProbeConfig struct {
	// Config gives the target and the request the checks send (Target,
	// Method, Headers, DocumentRoot, Params). Timeout bounds each
	// exchange (0 means DefaultProbeTimeout); Body, KeepAlive and
	// Verbose are not used.
	Config
	// MaxRequests bounds the max_requests_per_connection check, in
	// requests; 0 means DefaultProbeMaxRequests.
	MaxRequests int
	// MaxRequestsTime bounds the duration of that check; 0 means
	// DefaultProbeMaxRequestsTime.
	MaxRequestsTime time.Duration
	// Only, when not empty, names the checks to run (ProbeChecks); Skip
	// names checks not to run. The others get the verdict "skipped".
	Only, Skip []string
}

// ProbeChecks are the names of the checks in the order they run: by
// harm, so that a fragile server (Ruby's fcgi.rb exits on a GET_VALUES
// that asks for any name, on an unknown role and on ABORT_REQUEST) answers
// the checks a frontend's ordinary traffic makes before the odd ones.
var ProbeChecks = []string{"response", "keep_conn", "params", "max_requests_per_connection",
	"get_values_empty", "get_values", "unknown_type", "unknown_role", "roles", "multiplexing", "abort"}

// crashMeaning says, per check, what a server that died on it means for a
// frontend.
var crashMeaning = map[string]string{
	"response":                    "an ordinary request takes it down",
	"keep_conn":                   "a frontend that keeps connections (FCGI_KEEP_CONN) would take it down",
	"params":                      "a request with long, split or empty params would take it down",
	"max_requests_per_connection": "many requests on one kept connection would take it down",
	"get_values_empty":            "a frontend that sends FCGI_GET_VALUES would take it down",
	"get_values":                  "a frontend that sends FCGI_GET_VALUES would take it down",
	"unknown_type":                "a management record it does not know would take it down",
	"unknown_role":                "a request in a role other than RESPONDER would take it down",
	"roles":                       "a request in a role other than RESPONDER would take it down",
	"multiplexing":                "a frontend that multiplexes requests on a connection would take it down",
	"abort":                       "a frontend that aborts a request (FCGI_ABORT_REQUEST, as when a client goes away) would take it down",
}

// crashSettle is how long the probe waits after a check that the server
// closed without an answer, before the next check dials.
const crashSettle = 300 * time.Millisecond

// ErrUnreachable is returned by Probe, wrapped with the dial's error, when
// the first check cannot connect at all (refused, no such socket).
var ErrUnreachable = errors.New("fcgi: the server cannot be reached")

// Check is what every check reports (see probe.Check).
type Check = probe.Check

// GetValuesResult is the outcome of the get_values check.
type GetValuesResult struct {
	Check
	// Values are the variables answered, by name (nil when none).
	Values map[string]string `json:"values"`
	// MaxConns, MaxReqs and MpxsConns are the numeric values of
	// FCGI_MAX_CONNS, FCGI_MAX_REQS and FCGI_MPXS_CONNS, nil when not
	// answered or not a number.
	MaxConns  *int `json:"max_conns"`
	MaxReqs   *int `json:"max_reqs"`
	MpxsConns *int `json:"mpxs_conns"`
	// UnknownAnswered reports that the server answered the unknown name
	// (which the specification says it must leave out).
	UnknownAnswered bool `json:"unknown_answered"`
	// ClosedAfter reports whether the server closed the connection after
	// answering (nil when it did not answer).
	ClosedAfter *bool `json:"closed_after"`
}

// KeepConnResult is the outcome of the keep_conn check.
type KeepConnResult struct {
	Check
	// Served is how many of the two FCGI_KEEP_CONN requests were answered
	// on the one connection.
	Served int `json:"served"`
	// ClosesWithoutFlag reports whether the server closes the connection
	// after a request without FCGI_KEEP_CONN (nil when unknown).
	ClosesWithoutFlag *bool `json:"closes_without_flag"`
}

// MaxRequestsResult is the outcome of a max_requests_per_connection check
// (see probe.MaxRequestsResult).
type MaxRequestsResult = probe.MaxRequestsResult

// MultiplexResult is the outcome of the multiplexing check.
type MultiplexResult struct {
	Check
	// FirstAnswered and SecondAnswered report which requests ended with
	// END_REQUEST (any protocolStatus).
	FirstAnswered  bool `json:"first_answered"`
	SecondAnswered bool `json:"second_answered"`
	// SecondStatus is the protocolStatus of request 2's END_REQUEST
	// ("" when none).
	SecondStatus string `json:"second_status"`
}

// RoleResult is the outcome of sending a request in one role.
type RoleResult struct {
	Check
	// Role is the role number sent.
	Role int `json:"role"`
}

// RolesResult is the outcome of the roles check: AUTHORIZER and FILTER. Its
// verdict is theirs when they agree, else "mixed".
type RolesResult struct {
	Check
	Authorizer RoleResult `json:"authorizer"`
	Filter     RoleResult `json:"filter"`
}

// UnknownTypeResult is the outcome of the unknown_type check.
type UnknownTypeResult struct {
	Check
	// Type is the record type sent.
	Type int `json:"type"`
}

// AbortResult is the outcome of the abort check.
type AbortResult struct {
	Check
	// AppStatus and ProtocolStatus are those of the END_REQUEST (nil and ""
	// when none came).
	AppStatus      *int64 `json:"app_status"`
	ProtocolStatus string `json:"protocol_status"`
	// StdoutBytes is the STDOUT content received before it.
	StdoutBytes int64 `json:"stdout_bytes"`
}

// ParamsCase is the outcome of one name-value edge case.
type ParamsCase struct {
	Check
	// Status is the CGI status of the answer (0 when none).
	Status int `json:"status"`
}

// ParamsResult is the outcome of the params check: "served" when every case
// was, else "not served".
type ParamsResult struct {
	Check
	Length127 ParamsCase `json:"length_127"`
	Length128 ParamsCase `json:"length_128"`
	SplitPair ParamsCase `json:"split_pair"`
	Value64K  ParamsCase `json:"value_64k"`
}

// ResponseResult is the outcome of the response check: how the server frames
// an ordinary answer.
type ResponseResult struct {
	Check
	// StdoutRecords is the number of STDOUT records, the empty one included.
	StdoutRecords int `json:"stdout_records"`
	// StdoutSizes are the content sizes of the first STDOUT records.
	StdoutSizes []int `json:"stdout_sizes"`
	// MaxStdoutRecord is the largest STDOUT content, in bytes.
	MaxStdoutRecord int `json:"max_stdout_record"`
	// Paddings are the distinct padding lengths seen, in bytes.
	Paddings []int `json:"paddings"`
	// PaddedTo8 reports that every record ended on a multiple of 8 bytes.
	PaddedTo8 bool `json:"padded_to_8"`
	// StdoutBytes and StderrBytes are the content received on each stream.
	StdoutBytes int64 `json:"stdout_bytes"`
	StderrBytes int64 `json:"stderr_bytes"`
	// Stderr reports that STDERR content came.
	Stderr bool `json:"stderr"`
	// AppStatus and ProtocolStatus are those of the END_REQUEST.
	AppStatus      *int64 `json:"app_status"`
	ProtocolStatus string `json:"protocol_status"`
	// Status is the response status (from the CGI Status header, else 200
	// or 302), and StatusHeader the Status header as sent ("" if none).
	Status       int    `json:"status"`
	StatusHeader string `json:"status_header"`
}

// ProbeReport holds the outcome of every FastCGI check, under the keys of
// the JSON report.
type ProbeReport struct {
	// GetValuesEmpty is a GET_VALUES that asks for no name, then an
	// ordinary request on the same connection: the part of GET_VALUES that
	// even Ruby's fcgi.rb survives.
	GetValuesEmpty GetValuesResult `json:"get_values_empty"`
	// GetValues asks for the three variables and an unknown name.
	GetValues    GetValuesResult   `json:"get_values"`
	KeepConn     KeepConnResult    `json:"keep_conn"`
	MaxRequests  MaxRequestsResult `json:"max_requests_per_connection"`
	Multiplexing MultiplexResult   `json:"multiplexing"`
	UnknownRole  RoleResult        `json:"unknown_role"`
	Roles        RolesResult       `json:"roles"`
	UnknownType  UnknownTypeResult `json:"unknown_type"`
	Abort        AbortResult       `json:"abort"`
	Params       ParamsResult      `json:"params"`
	Response     ResponseResult    `json:"response"`
	// CrashedOn names the check after which the server stopped accepting
	// connections (empty when it did not); the later checks are skipped.
	CrashedOn string `json:"crashed_on,omitempty"`
}

// NamedCheck is one line of a text report: a check's key and its outcome.
type NamedCheck = probe.NamedCheck

// checks returns each check's outcome by name.
func (r *ProbeReport) checks() map[string]*Check {
	return map[string]*Check{
		"response": &r.Response.Check, "keep_conn": &r.KeepConn.Check, "params": &r.Params.Check,
		"max_requests_per_connection": &r.MaxRequests.Check, "get_values_empty": &r.GetValuesEmpty.Check,
		"get_values": &r.GetValues.Check, "unknown_type": &r.UnknownType.Check, "unknown_role": &r.UnknownRole.Check,
		"roles": &r.Roles.Check, "multiplexing": &r.Multiplexing.Check, "abort": &r.Abort.Check,
	}
}

// Lines returns the checks in the order they run, with their JSON keys.
func (r *ProbeReport) Lines() []NamedCheck {
	byName := r.checks()
	out := make([]NamedCheck, 0, len(ProbeChecks))
	for _, n := range ProbeChecks {
		out = append(out, NamedCheck{Name: n, Check: *byName[n]})
	}
	return out
}

// Summary returns what the outcome means for benchmarking, one sentence per
// line (never nil).
func (r *ProbeReport) Summary() []string {
	s := []string{}
	maxConns := ""
	if r.GetValues.MaxConns != nil {
		maxConns = strconv.Itoa(*r.GetValues.MaxConns)
	}
	switch r.KeepConn.Verdict {
	case VerdictHonored:
		line := "keep-alive: -k is meaningful (FCGI_KEEP_CONN honored)"
		if maxConns != "" {
			line += "; -c above " + maxConns + " will queue behind kept connections"
			if maxConns == "1" {
				// Seen on fcgiwrap and Perl FCGI: libfcgi answers 1 in
				// every worker process, whatever the pool size.
				line += " of one process (libfcgi answers FCGI_MAX_CONNS=1 in every worker: a pool of N processes, " +
					"fcgiwrap -c N or FCGI::ProcManager, serves N kept connections and the others wait for the whole run)"
			}
		} else {
			line += "; with -c above the server's worker count, the extra connections wait for the whole run"
		}
		s = append(s, line)
	case VerdictUnsolicited:
		s = append(s, "the server sends records nobody asked for after END_REQUEST: a client that keeps the connection reads them as "+
			"the next answer; backbench bench drops such a connection and counts the bytes apart (a note says how many)")
	case VerdictIgnored:
		line := "keep-alive: -k changes nothing (the server closes after every request)"
		if maxConns != "" {
			line += "; -c above " + maxConns + " will queue"
		}
		s = append(s, line)
	}
	if r.MaxRequests.Verdict == VerdictMeasured && r.MaxRequests.Requests != nil && *r.MaxRequests.Requests > 1 {
		s = append(s, fmt.Sprintf("with -k, the server closes a kept connection every %d requests: expect about one reconnect per %d requests", *r.MaxRequests.Requests, *r.MaxRequests.Requests))
	}
	switch {
	case r.CrashedOn == "get_values":
		// said below
	case r.GetValues.Verdict == VerdictNoAnswer:
		s = append(s, "FCGI_GET_VALUES gets no answer and the connection stays open: a frontend that sends it waits forever (backbench bench never sends it)")
	case r.GetValues.Verdict == VerdictClosed:
		s = append(s, "FCGI_GET_VALUES closes the connection without an answer (backbench bench never sends it)")
	}
	switch r.Multiplexing.Verdict {
	case VerdictLost:
		s = append(s, "multiplexing: a second request on a busy connection is lost silently; never multiplex (backbench sends one request per connection at a time)")
	case VerdictSupported:
		s = append(s, "multiplexing: supported, but backbench sends one request per connection at a time; use -c for concurrency")
	}
	if r.CrashedOn != "" {
		s = append(s, "the server crashed on "+r.CrashedOn+": "+crashMeaning[r.CrashedOn]+
			"; the later checks were skipped (restart it, and --skip "+r.CrashedOn+" to probe the rest)")
	}
	if r.Response.Verdict == VerdictSkipped {
		// not run, or after a crash: nothing to say about it
	} else if r.Response.Verdict != VerdictAnswered {
		s = append(s, "no ordinary request was answered: check the URL, --document-root (SCRIPT_FILENAME) and the server before benchmarking")
	} else if r.Response.Status >= 400 {
		s = append(s, fmt.Sprintf("the request answers status %d: every benchmark response will be a non-2xx (check the URL and --document-root)", r.Response.Status))
	}
	return s
}

// Probe runs every FastCGI check against cfg.Target, one after the other.
// It returns an error only for a bad configuration; what the server does,
// including not answering, is in the report. Cancelling ctx ends the check
// in progress at once (its verdict is then "no answer") and the rest quickly.
func Probe(ctx context.Context, cfg ProbeConfig) (*ProbeReport, error) {
	run, err := SelectChecks(cfg.Only, cfg.Skip)
	if err != nil {
		return nil, err
	}
	p, err := newProber(cfg)
	if err != nil {
		return nil, err
	}
	r := &ProbeReport{}
	runs := map[string]func(){
		"response":                    func() { r.Response = p.response(ctx) },
		"keep_conn":                   func() { r.KeepConn = p.keepConn(ctx) },
		"params":                      func() { r.Params = p.params(ctx) },
		"max_requests_per_connection": func() { r.MaxRequests = p.maxRequests(ctx) },
		"get_values_empty":            func() { r.GetValuesEmpty = p.getValuesEmpty(ctx) },
		"get_values":                  func() { r.GetValues = p.getValues(ctx) },
		"unknown_type":                func() { r.UnknownType = p.unknownType(ctx) },
		"unknown_role":                func() { r.UnknownRole = p.role(ctx, ProbeUnknownRole, time.Time{}) },
		"roles":                       func() { r.Roles = p.roles(ctx) },
		"multiplexing":                func() { r.Multiplexing = p.multiplexing(ctx) },
		"abort":                       func() { r.Abort = p.abort(ctx) },
	}
	byName := r.checks()
	steps := make([]probe.Step, 0, len(ProbeChecks))
	for _, name := range ProbeChecks {
		steps = append(steps, probe.Step{Name: name, Check: byName[name], Run: runs[name]})
	}
	last := "" // the last check that reached the server
	// after tells a server that went down from one that never came up.
	after := func(s probe.Step) (string, error) {
		defer func() { p.reached, p.gone = false, nil }() // per check
		chk := s.Check
		switch {
		case p.gone == nil:
		case p.reached:
			// It went down during this check, after accepting it.
			r.CrashedOn = s.Name
		case last == "":
			return "", fmt.Errorf("%w: %s", ErrUnreachable, sockets.Describe(p.gone))
		default:
			r.CrashedOn = last
			chk.Verdict, chk.Evidence = VerdictSkipped, "the server stopped accepting connections after "+last
		}
		if p.reached {
			last = s.Name
		}
		if chk.Verdict == VerdictClosed || chk.Verdict == VerdictError {
			// A server that closed without answering may be on its way
			// out (Ruby prints a backtrace first): let it go before the
			// next check dials, or that check would take the blame.
			select {
			case <-time.After(min(p.timeout, crashSettle)):
			case <-ctx.Done():
			}
		}
		if r.CrashedOn != "" {
			return "the server stopped accepting connections after " + r.CrashedOn, nil
		}
		return "", nil
	}
	if err := probe.RunAll(steps, run, after); err != nil {
		return nil, err
	}
	return r, nil
}

// SelectChecks returns the checks to run given --only and --skip lists of
// names (ProbeChecks); an unknown name is an error.
func SelectChecks(only, skip []string) (map[string]bool, error) {
	run, err := probe.Select(ProbeChecks, only, skip)
	if err != nil {
		return nil, fmt.Errorf("fcgi: %w", err)
	}
	return run, nil
}

// prober holds what every check shares.
type prober struct {
	// reached and gone are per check: a dial succeeded, and a dial failed
	// because nothing accepts connections any more (load.Unreachable).
	reached bool
	gone    error
	cfg     ProbeConfig
	run     probe.Runner
	timeout time.Duration
	pairs   [][2]string // the params of the ordinary request
	// rec is the record buffer of every read: the checks run one at a
	// time, and each record is used up before the next is read.
	rec []byte
}

func newProber(cfg ProbeConfig) (*prober, error) {
	switch cfg.Target.Network {
	case "tcp", "unix":
	default:
		return nil, fmt.Errorf("fcgi: unsupported network %q (want tcp or unix)", cfg.Target.Network)
	}
	if cfg.Timeout < 0 || cfg.MaxRequests < 0 || cfg.MaxRequestsTime < 0 {
		return nil, errors.New("fcgi: negative probe bound")
	}
	// A bound left at 0 takes its default.
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultProbeTimeout)
	cfg.MaxRequests = cmp.Or(cfg.MaxRequests, DefaultProbeMaxRequests)
	cfg.MaxRequestsTime = cmp.Or(cfg.MaxRequestsTime, DefaultProbeMaxRequestsTime)
	p := &prober{cfg: cfg, timeout: cfg.Timeout, pairs: Params(cfg.Config), rec: make([]byte, MaxContent+MaxPadding)}
	p.run = probe.Runner{Dialer: sockets.NewDialer(cfg.Target, 0), Timeout: cfg.Timeout, Inside: "a record",
		Dialed: func(err error) {
			switch {
			case err == nil:
				p.reached = true
			case load.Unreachable(err) && p.gone == nil:
				p.gone = err
			}
		}}
	return p, nil
}

// settle is how long to watch for a close after an answer.
func (p *prober) settle() time.Duration { return min(p.timeout, probeSettle) }

// requestRecords encodes a whole request for id in role with flags: BEGIN,
// the params plus extra, the end of PARAMS, stdin and the end of STDIN (and
// an empty DATA stream for FILTER).
func (p *prober) requestRecords(id uint16, role uint16, flags uint8, extra [][2]string, stdin []byte) []byte {
	b := AppendBeginRequest(nil, id, role, flags)
	b = p.appendParams(b, id, extra)
	if len(stdin) > 0 {
		b = AppendRecord(b, TypeStdin, id, stdin)
	}
	b = AppendRecord(b, TypeStdin, id, nil)
	if role == RoleFilter {
		b = AppendRecord(b, TypeData, id, nil)
	}
	return b
}

// appendParams appends the PARAMS stream (the ordinary params plus extra)
// and its end record.
func (p *prober) appendParams(b []byte, id uint16, extra [][2]string) []byte {
	pairs := AppendPairs(AppendPairs(nil, p.pairs), extra)
	b = AppendRecord(b, TypeParams, id, pairs)
	return AppendRecord(b, TypeParams, id, nil)
}

// next reads one record from c into the record buffer.
func (p *prober) next(c *probe.Conn) (Header, []byte, error) {
	h, content, err := ReadRecord(c.In, p.rec)
	if err == nil && h.Version != Version1 {
		err = fmt.Errorf("fcgi: record of version %d (want 1)", h.Version)
	}
	return h, content, err
}

// reqState is what came back for one request id.
type reqState struct {
	id          uint16
	any         bool // a record for this id came
	stdout      int64
	stdoutRecs  int
	sizes       []int
	maxRecord   int
	pads        map[int]bool
	padded8     bool
	stderr      int64
	head        []byte
	headDone    bool
	status      int
	statusHdr   string
	headErr     error
	ended       bool
	appStatus   uint32
	ps          ProtocolStatus
	unexpectedT []string
}

func newState(id uint16) *reqState { return &reqState{id: id, pads: map[int]bool{}, padded8: true} }

// add applies one record of this id.
func (s *reqState) add(h Header, content []byte) {
	s.any = true
	if (int(h.ContentLength)+int(h.PaddingLength))%8 != 0 {
		s.padded8 = false
	}
	switch h.Type {
	case TypeStdout:
		s.stdoutRecs++
		s.pads[int(h.PaddingLength)] = true
		if len(s.sizes) < maxSizesKept {
			s.sizes = append(s.sizes, len(content))
		}
		s.maxRecord = max(s.maxRecord, len(content))
		s.stdout += int64(len(content))
		if !s.headDone && len(content) > 0 {
			take := min(len(content), MaxHeaderBlock-len(s.head))
			s.head = append(s.head, content[:take]...)
			if end, _, _ := FindHeaderEnd(s.head, 0); end >= 0 {
				s.headDone = true
				s.status, _, s.headErr = ParseCGIHead(s.head[:end])
				s.statusHdr = cgiHeader(s.head[:end], "Status")
				s.head = nil
			} else if len(s.head) >= MaxHeaderBlock {
				s.headDone, s.headErr = true, errors.New("CGI header block over 64 KiB")
				s.head = nil
			}
		}
	case TypeStderr:
		s.stderr += int64(len(content))
	case TypeEndRequest:
		s.ended = true
		app, ps, err := ParseEndRequest(content)
		if err == nil {
			s.appStatus, s.ps = app, ps
		} else {
			s.ps = 255
		}
	default:
		if len(s.unexpectedT) < 4 {
			s.unexpectedT = append(s.unexpectedT, h.Type.String())
		}
	}
}

// served reports a complete ordinary answer.
func (s *reqState) served() bool {
	return s.ended && s.ps == StatusRequestComplete && s.headDone && s.headErr == nil
}

// describe tells what came back for the request.
func (s *reqState) describe() string {
	if !s.any {
		return "nothing"
	}
	var parts []string
	if s.stdoutRecs > 0 {
		parts = append(parts, fmt.Sprintf("STDOUT %d bytes in %d records", s.stdout, s.stdoutRecs))
	}
	if s.stderr > 0 {
		parts = append(parts, fmt.Sprintf("STDERR %d bytes", s.stderr))
	}
	if s.headDone && s.headErr == nil {
		parts = append(parts, "status "+strconv.Itoa(s.status))
	} else if s.headErr != nil {
		parts = append(parts, "bad CGI head: "+s.headErr.Error())
	}
	if len(s.unexpectedT) > 0 {
		parts = append(parts, "unexpected "+strings.Join(s.unexpectedT, ", "))
	}
	if s.ended {
		parts = append(parts, fmt.Sprintf("END_REQUEST appStatus %d %s", s.appStatus, s.ps))
	}
	return strings.Join(parts, ", ")
}

// askRecord writes the management record b on c and reads the record that
// answers it. On an error chk gets its verdict and evidence (what was
// sent, then the error) and ok is false.
func (p *prober) askRecord(c *probe.Conn, chk *Check, sent string, b []byte) (h Header, content []byte, ok bool) {
	if _, err := c.Write(b); err != nil {
		p.run.Fail(chk, sent+"; write: ", err)
		return h, nil, false
	}
	h, content, err := p.next(c)
	if err != nil {
		p.run.Fail(chk, sent+"; ", err)
		return h, nil, false
	}
	return h, content, true
}

// send writes b on c and reads records until every state has ended.
// Records for other ids are noted in others.
func (p *prober) send(c *probe.Conn, b []byte, others *[]string, states ...*reqState) error {
	if _, err := c.Write(b); err != nil {
		return err
	}
	return p.collect(c, others, states...)
}

// collect reads records until every state has ended. Records for other ids
// are noted in others.
func (p *prober) collect(c *probe.Conn, others *[]string, states ...*reqState) error {
	for {
		done := true
		for _, s := range states {
			done = done && s.ended
		}
		if done {
			return nil
		}
		h, content, err := p.next(c)
		if err != nil {
			return err
		}
		var st *reqState
		for _, s := range states {
			if s.id == h.ID {
				st = s
			}
		}
		if st == nil {
			if others != nil && len(*others) < 4 {
				*others = append(*others, fmt.Sprintf("%s for id %d", h.Type, h.ID))
			}
			continue
		}
		st.add(h, content)
	}
}

// cgiHeader returns the value of the named header in a CGI header block.
func cgiHeader(block []byte, name string) string {
	for len(block) > 0 {
		line := block
		if i := bytes.IndexByte(block, '\n'); i >= 0 {
			line, block = block[:i], block[i+1:]
		} else {
			block = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if n, v, ok := bytes.Cut(line, []byte(":")); ok && asciiEqualFold(bytes.TrimSpace(n), name) {
			return string(bytes.TrimSpace(v))
		}
	}
	return ""
}

// ordinary does one ordinary request (id 1) on pc and returns its state.
func (p *prober) ordinary(ctx context.Context, c *probe.Conn, flags uint8) (*reqState, error) {
	c.Exchange(ctx, p.timeout)
	st := newState(RequestID)
	return st, p.send(c, p.requestRecords(RequestID, RoleResponder, flags, nil, nil), nil, st)
}

// askKept is the runner's Ask of an ordinary request with FCGI_KEEP_CONN:
// on an error, what came for it is said.
func (p *prober) askKept(ctx context.Context, c *probe.Conn) (probe.Answer, error) {
	st, err := p.ordinary(ctx, c, FlagKeepConn)
	if err != nil {
		return probe.Answer{Got: "got " + st.describe()}, err
	}
	return probe.Answer{}, nil
}

// getValuesEmpty sends a GET_VALUES that asks for no name, then an ordinary
// request on the same connection (a connection closed without a request
// takes some servers down).
func (p *prober) getValuesEmpty(ctx context.Context) (r GetValuesResult) {
	return p.getValuesOf(ctx, nil)
}

// getValues sends GET_VALUES for the three variables and an unknown name as
// the first record of a fresh connection.
func (p *prober) getValues(ctx context.Context) (r GetValuesResult) {
	return p.getValuesOf(ctx, []string{VarMaxConns, VarMaxReqs, VarMpxsConns, ProbeUnknownName})
}

// getValuesOf sends GET_VALUES for names as the first record of a fresh
// connection; with no name, an ordinary request follows on it.
func (p *prober) getValuesOf(ctx context.Context, names []string) (r GetValuesResult) {
	sent := "sent GET_VALUES " + strings.Join(names, ", ")
	if len(names) == 0 {
		sent = "sent GET_VALUES with no name"
	}
	p.run.Run(ctx, &r.Check, time.Time{}, func(c *probe.Conn) {
		h, content, ok := p.askRecord(c, &r.Check, sent, AppendGetValues(nil, names...))
		switch {
		case !ok:
		case h.Type == TypeGetValuesResult:
			r.Evidence = p.getValuesAnswer(ctx, c, &r, sent, names, content)
		case h.Type == TypeUnknownType:
			r.Verdict = VerdictUnknownType
			r.Evidence = sent + "; got UNKNOWN_TYPE"
		default:
			r.Verdict = VerdictError
			r.Evidence = fmt.Sprintf("%s; got %s for id %d", sent, h.Type, h.ID)
		}
	})
	return r
}

// getValuesAnswer reads the GET_VALUES_RESULT content into r and returns
// the evidence: with no name asked, after an ordinary request on c; else
// after watching c for the server's close.
func (p *prober) getValuesAnswer(ctx context.Context, c *probe.Conn, r *GetValuesResult, sent string, names []string, content []byte) string {
	pairs, perr := ParsePairs(content)
	r.Verdict = VerdictAnswered
	r.Values = map[string]string{}
	var got []string
	for _, kv := range pairs {
		r.Values[kv[0]] = kv[1]
		got = append(got, kv[0]+"="+kv[1])
		n, err := strconv.Atoi(strings.TrimSpace(kv[1]))
		num := &n
		if err != nil {
			num = nil
		}
		switch kv[0] {
		case VarMaxConns:
			r.MaxConns = num
		case VarMaxReqs:
			r.MaxReqs = num
		case VarMpxsConns:
			r.MpxsConns = num
		case ProbeUnknownName:
			r.UnknownAnswered = true
		}
	}
	ev := sent + "; got GET_VALUES_RESULT "
	if len(got) == 0 {
		ev += "with no values"
	} else {
		ev += strings.Join(got, ", ")
	}
	if perr != nil {
		ev += " (malformed: " + perr.Error() + ")"
	}
	if len(names) == 0 {
		st, err := p.ordinary(ctx, c, 0)
		switch {
		case err != nil:
			return ev + "; then an ordinary request: " + p.run.Describe(err)
		case st.served():
			return ev + "; then an ordinary request on the connection was answered"
		default:
			return ev + "; then an ordinary request: " + st.describe()
		}
	}
	closed := c.WatchClose(ctx, p.settle())
	r.ClosedAfter = &closed
	if closed {
		return ev + "; then the server closed the connection"
	}
	return ev + "; the connection stayed open"
}

// keepConn sends two FCGI_KEEP_CONN requests on one connection, then one
// request without the flag on another and watches for the close.
func (p *prober) keepConn(ctx context.Context) (r KeepConnResult) {
	p.run.Run(ctx, &r.Check, time.Time{}, func(c *probe.Conn) {
		r.Served = p.run.Reuse(ctx, c, &r.Check, probe.Reuse{First: "request 1 with FCGI_KEEP_CONN",
			Trailer: " after END_REQUEST", Ask: p.askKept})
		if r.Served == 0 || r.Verdict == VerdictUnsolicited {
			return
		}
		c.Close() // before the next dial: a server of one worker serves one connection

		// The flag clear: does the server close?
		c2, err := p.run.Dial(ctx, time.Time{})
		if err != nil {
			r.Evidence += "; without the flag: connect: " + sockets.Describe(err)
			return
		}
		defer c2.Close()
		if _, err := p.ordinary(ctx, c2, 0); err != nil {
			r.Evidence += "; request without the flag: " + p.run.Describe(err)
			return
		}
		closes := c2.WatchClose(ctx, p.settle())
		r.ClosesWithoutFlag = &closes
		if closes {
			r.Evidence += "; without the flag the server closes after the answer"
		} else {
			r.Evidence += "; without the flag the connection stayed open " + p.settle().String() + " after the answer"
		}
	})
	return r
}

// maxRequests sends FCGI_KEEP_CONN requests on one connection until the
// server closes it, the bound or the time budget.
func (p *prober) maxRequests(ctx context.Context) MaxRequestsResult {
	return p.run.MaxRequests(ctx, probe.Repeat{What: "requests with FCGI_KEEP_CONN", Trailer: " after END_REQUEST",
		Bound: p.cfg.MaxRequests, Time: p.cfg.MaxRequestsTime, Ask: p.askKept})
}

// multiplexing interleaves a second request inside the first one.
func (p *prober) multiplexing(ctx context.Context) (r MultiplexResult) {
	p.run.Run(ctx, &r.Check, time.Time{}, func(c *probe.Conn) {
		const id1, id2 = 1, 2
		b := AppendBeginRequest(nil, id1, RoleResponder, FlagKeepConn)
		b = p.appendParams(b, id1, nil)
		b = AppendRecord(b, TypeStdin, id1, []byte("backbench-probe"))
		b = append(b, p.requestRecords(id2, RoleResponder, FlagKeepConn, nil, nil)...)
		b = AppendRecord(b, TypeStdin, id1, nil)
		sent := "sent request 1 (BEGIN, PARAMS, 15 bytes of STDIN), request 2 whole, then the end of request 1's STDIN, with FCGI_KEEP_CONN"
		s1, s2 := newState(id1), newState(id2)
		var others []string
		err := p.send(c, b, &others, s1, s2)
		r.FirstAnswered, r.SecondAnswered = s1.ended, s2.ended
		if s2.ended {
			r.SecondStatus = s2.ps.String()
		}
		ev := sent + "; request 1: " + s1.describe() + "; request 2: " + s2.describe()
		if len(others) > 0 {
			ev += "; also " + strings.Join(others, ", ")
		}
		if err != nil {
			ev += "; then " + p.run.Describe(err)
		}
		r.Evidence = ev
		switch {
		case s2.ended && s2.ps == StatusCantMpxConn:
			r.Verdict = VerdictRejected
		case s1.served() && s2.served():
			r.Verdict = VerdictSupported
		case s2.ended:
			r.Verdict = s2.ps.String()
		case s1.ended:
			r.Verdict = VerdictLost
		case err != nil:
			r.Verdict = probe.VerdictOf(err)
		}
	})
	return r
}

// roleName names a role for the evidence.
func roleName(role int) string {
	switch role {
	case RoleResponder:
		return "RESPONDER"
	case RoleAuthorizer:
		return "AUTHORIZER"
	case RoleFilter:
		return "FILTER"
	}
	return "role " + strconv.Itoa(role)
}

// role sends a whole request in the given role, all by limit (if not zero).
func (p *prober) role(ctx context.Context, role int, limit time.Time) (r RoleResult) {
	r.Role = role
	p.run.Run(ctx, &r.Check, limit, func(c *probe.Conn) {
		var extra [][2]string
		if role == RoleFilter {
			extra = [][2]string{{"FCGI_DATA_LAST_MOD", "0"}, {"FCGI_DATA_LENGTH", "0"}}
		}
		sent := "sent BEGIN_REQUEST " + roleName(role) + ", PARAMS, empty STDIN"
		if role == RoleFilter {
			sent += " and empty DATA"
		}
		st := newState(RequestID)
		err := p.send(c, p.requestRecords(RequestID, uint16(role), 0, extra, nil), nil, st)
		switch {
		case st.ended && st.ps == StatusRequestComplete:
			r.Verdict = VerdictServed
		case st.ended:
			r.Verdict = st.ps.String()
		default:
			r.Verdict = probe.VerdictOf(err)
		}
		r.Evidence = p.run.Then(sent+"; got "+st.describe(), err)
	})
	return r
}

func (p *prober) roles(ctx context.Context) (r RolesResult) {
	start := time.Now()
	limit := start.Add(p.timeout) // both within the check's timeout
	r.Authorizer = p.role(ctx, RoleAuthorizer, limit)
	r.Filter = p.role(ctx, RoleFilter, limit)
	r.Verdict = r.Authorizer.Verdict
	if r.Filter.Verdict != r.Verdict {
		r.Verdict = VerdictMixed
	}
	r.Evidence = "AUTHORIZER: " + r.Authorizer.Verdict + "; FILTER: " + r.Filter.Verdict
	r.Seconds = probe.Since(start)
	return r
}

// unknownType sends a management record of an undefined type.
func (p *prober) unknownType(ctx context.Context) (r UnknownTypeResult) {
	r.Type = int(ProbeUnknownType)
	p.run.Run(ctx, &r.Check, time.Time{}, func(c *probe.Conn) {
		sent := fmt.Sprintf("sent a management record of type %d (8 zero bytes)", r.Type)
		h, content, ok := p.askRecord(c, &r.Check, sent, AppendRecord(nil, ProbeUnknownType, NullRequestID, make([]byte, 8)))
		switch {
		case !ok:
		case h.Type == TypeUnknownType && len(content) > 0:
			r.Verdict = VerdictUnknownType
			r.Evidence = fmt.Sprintf("%s; got UNKNOWN_TYPE naming type %d", sent, content[0])
		default:
			r.Verdict = VerdictError
			r.Evidence = fmt.Sprintf("%s; got %s for id %d (%d bytes)", sent, h.Type, h.ID, len(content))
		}
	})
	return r
}

// abort sends BEGIN and PARAMS, then ABORT_REQUEST instead of STDIN.
func (p *prober) abort(ctx context.Context) (r AbortResult) {
	p.run.Run(ctx, &r.Check, time.Time{}, func(c *probe.Conn) {
		b := AppendBeginRequest(nil, RequestID, RoleResponder, 0)
		b = p.appendParams(b, RequestID, nil)
		b = AppendHeader(b, TypeAbortRequest, RequestID, 0, 0)
		sent := "sent BEGIN_REQUEST, PARAMS, then ABORT_REQUEST (no STDIN)"
		st := newState(RequestID)
		err := p.send(c, b, nil, st)
		r.StdoutBytes = st.stdout
		if st.ended {
			r.Verdict = VerdictEndRequest
			app := int64(st.appStatus)
			r.AppStatus, r.ProtocolStatus = &app, st.ps.String()
		} else {
			r.Verdict = probe.VerdictOf(err)
		}
		r.Evidence = p.run.Then(sent+"; got "+st.describe(), err)
	})
	return r
}

// params tries name-value pairs at the edges of the encoding.
func (p *prober) params(ctx context.Context) (r ParamsResult) {
	start := time.Now()
	limit := start.Add(p.timeout) // every case within the check's timeout
	long := func(prefix string, n int) string { return prefix + strings.Repeat("X", n-len(prefix)) }
	r.Length127 = p.paramsCase(ctx, limit, "a name and a value of 127 bytes (1-byte lengths)",
		[][2]string{{long("HTTP_X_BACKBENCH_", 127), strings.Repeat("v", 127)}}, -1)
	r.Length128 = p.paramsCase(ctx, limit, "a name and a value of 128 bytes (4-byte lengths)",
		[][2]string{{long("HTTP_X_BACKBENCH_", 128), strings.Repeat("v", 128)}}, -1)
	r.SplitPair = p.paramsCase(ctx, limit, "a pair split across two PARAMS records",
		[][2]string{{"HTTP_X_BACKBENCH_SPLIT", "split-value"}}, 7)
	r.Value64K = p.paramsCase(ctx, limit, "a value of 64 KiB over two PARAMS records",
		[][2]string{{"HTTP_X_BACKBENCH_BIG", strings.Repeat("v", 64<<10)}}, -1)
	cases := []struct {
		name string
		c    *ParamsCase
	}{{"length_127", &r.Length127}, {"length_128", &r.Length128}, {"split_pair", &r.SplitPair}, {"value_64k", &r.Value64K}}
	r.Verdict = VerdictServed
	var ev []string
	for _, c := range cases {
		if c.c.Verdict != VerdictServed {
			r.Verdict = VerdictNotServed
		}
		ev = append(ev, c.name+": "+c.c.Verdict)
	}
	r.Evidence = strings.Join(ev, ", ")
	r.Seconds = probe.Since(start)
	return r
}

// paramsCase sends one request with extra pairs appended to the ordinary
// ones. With split >= 0, the PARAMS stream is cut into two records split
// bytes into the first extra pair.
func (p *prober) paramsCase(ctx context.Context, limit time.Time, what string, extra [][2]string, split int) (r ParamsCase) {
	dialed := p.run.Run(ctx, &r.Check, limit, func(c *probe.Conn) {
		b := AppendBeginRequest(nil, RequestID, RoleResponder, 0)
		base := AppendPairs(nil, p.pairs)
		stream := AppendPairs(append([]byte(nil), base...), extra)
		nrec := (len(stream) + ChunkSize - 1) / ChunkSize
		if split >= 0 {
			cut := len(base) + split
			b = AppendRecord(b, TypeParams, RequestID, stream[:cut])
			b = AppendRecord(b, TypeParams, RequestID, stream[cut:])
			nrec = 2
		} else {
			b = AppendRecord(b, TypeParams, RequestID, stream)
		}
		b = AppendRecord(b, TypeParams, RequestID, nil)
		b = AppendRecord(b, TypeStdin, RequestID, nil)
		st := newState(RequestID)
		err := p.send(c, b, nil, st)
		r.Status = st.status
		if st.served() {
			r.Verdict = VerdictServed
		} else {
			r.Verdict = VerdictNotServed
		}
		r.Evidence = p.run.Then(fmt.Sprintf("sent %s (PARAMS stream of %d bytes in %d records); got %s", what, len(stream), nrec, st.describe()), err)
	})
	if !dialed {
		r.Verdict = VerdictNotServed
	}
	return r
}

// response sends one ordinary request and describes the framing of the
// answer.
func (p *prober) response(ctx context.Context) (r ResponseResult) {
	p.run.Run(ctx, &r.Check, time.Time{}, func(c *probe.Conn) {
		st, err := p.ordinary(ctx, c, 0)
		r.StdoutRecords, r.StdoutSizes, r.MaxStdoutRecord = st.stdoutRecs, st.sizes, st.maxRecord
		r.PaddedTo8 = st.padded8 && st.any
		for pad := range st.pads {
			r.Paddings = append(r.Paddings, pad)
		}
		sort.Ints(r.Paddings)
		r.StdoutBytes, r.StderrBytes, r.Stderr = st.stdout, st.stderr, st.stderr > 0
		r.Status, r.StatusHeader = st.status, st.statusHdr
		if st.ended {
			app := int64(st.appStatus)
			r.AppStatus, r.ProtocolStatus = &app, st.ps.String()
		}
		switch {
		case err != nil:
			r.Verdict = probe.VerdictOf(err)
		case st.headErr != nil || !st.headDone:
			r.Verdict = VerdictError
		default:
			r.Verdict = VerdictAnswered
		}
		r.Evidence = "sent " + p.cfg.Target.RequestURI() + " (RESPONDER, no FCGI_KEEP_CONN); got " + st.describe()
		if st.stdoutRecs > 0 {
			r.Evidence += fmt.Sprintf("; STDOUT records up to %d bytes, paddings %v", st.maxRecord, r.Paddings)
		}
		r.Evidence = p.run.Then(r.Evidence, err)
	})
	return r
}

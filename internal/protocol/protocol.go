// Package protocol is the registry of the wire protocols backbench speaks
// (FastCGI, HTTP/1.x, and any other a package registers), and the
// interface each one implements: its schemes, which request options it
// takes, how its clients are made from a plan's request, what it adds to
// the run's record, the words the notes use for its facts, its probe, and
// which engine suits it.
//
// Lookup(scheme) is the one place, beside the URL parser in package
// sockets, where a scheme string decides anything: every other package
// asks the Protocol it returns.
//
// The built-in protocols, registered by this package's init, are FastCGI
// (fcgi://, FCGI over package fcgi) and HTTP/1.x (http:// and https://,
// HTTP over package httpprobe). Each is a thin adapter: it turns a plan's
// request and options into its client package's Config, and says what the
// protocol adds to the record, to the notes and to probe. The adapters
// live here rather than in fcgi and httpprobe so that the wire clients stay
// free of the registry and of the record (internal/stats): they are
// libraries the harness in bench/ and the tests use on their own. Another
// protocol registers from a package of its own that imports this one.
package protocol

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/probe"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/sockets"
)

// Protocol is one wire protocol. Its methods take the protocol's own
// options (what Options returned) as an any: each protocol owns their
// type, and nothing outside it looks inside.
type Protocol interface {
	// Name is the protocol's name: "fcgi", "http".
	Name() string
	// Schemes are its URL schemes, with their default ports and whether
	// they are TLS (http and https for HTTP).
	Schemes() []Scheme
	// Check refuses the request options of f the protocol does not take,
	// with the command line's own words ("--http1.0 applies to http://
	// targets only"); it looks only at the fields set, so that a command
	// may check some options before it has parsed the others.
	Check(f Flags) error
	// Options checks f (Check) and returns the protocol's options for a
	// plan (execute.Plan.ProtoOptions): a FastCGI document root made
	// absolute, for example.
	Options(f Flags) (any, error)
	// Factory returns the load client factory of the request (the request
	// is encoded once, here or in the factory).
	Factory(r Request, opts any) (load.ClientFactory, error)
	// Record adds to rp, the plan as the record keeps it, what the
	// protocol knows of the request: HTTP's version and Connection
	// header, and the words of the report (stats.Wire).
	Record(r Request, opts any, rp *stats.Plan)
	// Notes are the words the run's notes use for the protocol.
	Notes() Notes
	// RingByDefault says whether the io_uring engine, when it is free to
	// choose (--engine auto), runs a plain (not TLS) target of the
	// protocol with or without keep-alive: where it was measured to cost
	// less client CPU than the poller (docs/performance.md).
	RingByDefault(keepAlive bool) bool
	// Probe runs the protocol's probe checks (backbench probe).
	Probe(ctx context.Context, r ProbeRequest) (*ProbeResult, error)
}

// Scheme is a URL scheme of a protocol.
type Scheme struct {
	// Name is the scheme in lower case, without "://".
	Name string
	// Port is the default port of its URLs.
	Port string
	// TLS says whether its connections are TLS.
	TLS bool
}

// Flags are the protocol-specific request options of the command line;
// each protocol takes some and refuses the others (Protocol.Check).
type Flags struct {
	// Params are FastCGI params to set (--param NAME=VALUE, parsed).
	Params [][2]string
	// DocumentRoot is FastCGI's DOCUMENT_ROOT (--document-root); "" means
	// the current directory.
	DocumentRoot string
	// HTTP10 asks for HTTP/1.0 requests (--http1.0).
	HTTP10 bool
	// FPMStatus is php-fpm's status path (--fpm-status).
	FPMStatus string
}

// Request is what every protocol's request is made of, whatever the
// protocol.
type Request struct {
	// Target is where to connect and what to ask for.
	Target sockets.Target
	// Method, Headers, Body and ContentType make the request.
	Method      string
	Headers     [][2]string
	Body        []byte
	ContentType string
	// KeepAlive keeps connections open.
	KeepAlive bool
	// Timeout bounds one request, from dial to last byte.
	Timeout time.Duration
	// Dialer, when not nil, replaces the target's own address (a cluster,
	// TLS).
	Dialer *sockets.Dialer
	// Verbose, when not nil, receives request and response heads.
	Verbose io.Writer
	// Mix, when not empty, are the requests of a mix (--targets): the
	// protocol encodes each once, and its clients send Mix[r.Target] for
	// each load.Result r instead of the request above (whose Target's
	// address, keep-alive, timeout and dialer still apply).
	Mix []Variant
}

// Variant is one request of a mix: what differs from the run's request.
// Its headers are the whole list sent (the command line's -H merged in
// by the caller).
type Variant struct {
	// Path and RawQuery are the request's path and query, on the run's
	// target.
	Path, RawQuery string
	// Method, Headers, Body and ContentType make the request.
	Method      string
	Headers     [][2]string
	Body        []byte
	ContentType string
}

// Apply returns r as the request of variant v (its Mix emptied).
func (v Variant) Apply(r Request) Request {
	r.Target.Path, r.Target.RawQuery = v.Path, v.RawQuery
	r.Method, r.Headers, r.Body, r.ContentType = v.Method, v.Headers, v.Body, v.ContentType
	r.Mix = nil
	return r
}

// Notes are the words the notes of a run use for a protocol's facts.
type Notes struct {
	// KeepAlive names what -k asks of the server: "FCGI_KEEP_CONN".
	KeepAlive string
	// AfterResponse says where bytes nobody asked for came: "after
	// END_REQUEST".
	AfterResponse string
	// Reconnects says which servers close kept connections, and why.
	Reconnects string
	// ClosedEvery ends the note of a -k run whose server closed the
	// connection after every response, given the run's summary.
	ClosedEvery func(s *stats.Summary) string
	// AllNon2xx ends the note of a run whose every response was non-2xx:
	// what to check, given the summary, the request's SCRIPT_FILENAME
	// (FastCGI) and what the backend said on its error stream ("" for
	// nothing).
	AllNon2xx func(s *stats.Summary, r Request, opts any, said string) string
}

// Fetcher is a protocol that can send one request on a fresh connection
// and return the response's status and body (at most MaxFetchBody bytes):
// a study's verification request, never load.
type Fetcher interface {
	// Fetch sends r once (without keep-alive) and returns the status and
	// the body; r.Timeout bounds the exchange.
	Fetch(ctx context.Context, r Request, opts any) (status int, body []byte, err error)
}

// ScriptNamer is a protocol whose requests name the script the backend
// runs (FastCGI's SCRIPT_FILENAME): what a failed verification names.
type ScriptNamer interface {
	// ScriptFilename is the script r, sent with opts, names.
	ScriptFilename(r Request, opts any) string
}

// MaxFetchBody bounds the body a Fetcher returns, in bytes: 1 MiB.
const MaxFetchBody = 1 << 20

// StatusReader is a protocol that can read a backend's status page during
// a run (FastCGI: php-fpm's pm.status_path, --fpm-status).
type StatusReader interface {
	// ReadStatus reads the status page at path with the request's target
	// and options; on failure the map holds "error".
	ReadStatus(ctx context.Context, r Request, opts any, path string) map[string]string
}

// ProbeRequest is what backbench probe asks of a protocol's probe.
type ProbeRequest struct {
	// Target is the address probed.
	Target sockets.Target
	// Headers are the -H headers; Options the protocol's options.
	Headers [][2]string
	Options any
	// Dialer, when not nil, dials TLS.
	Dialer *sockets.Dialer
	// Timeout bounds each exchange; IdleMax the idle-timeout check.
	Timeout, IdleMax time.Duration
	// MaxRequests bounds the requests of the checks that count them.
	MaxRequests int
	// Only and Skip select checks by name.
	Only, Skip []string
}

// ProbeResult is a probe's report: its text lines, its summary, and the
// JSON object of its checks.
type ProbeResult struct {
	// Lines are the text lines, one per check.
	Lines []ProbeLine
	// Summary is the "For benchmarking" advice.
	Summary []string
	// Report is the checks' JSON object, each check under its key.
	Report any
}

// ProbeLine is one check's line: its name, verdict and evidence.
type ProbeLine struct{ Name, Verdict, Evidence string }

// probeLines turns a probe's checks into the registry's lines.
func probeLines(named []probe.NamedCheck) []ProbeLine {
	var out []ProbeLine
	for _, l := range named {
		out = append(out, ProbeLine{Name: l.Name, Verdict: l.Verdict, Evidence: l.Evidence})
	}
	return out
}

// Prober is the optional part of a protocol's probe: a protocol that
// implements it tells probe how to select its checks and whether probe
// opens one connection before them.
type Prober interface {
	// SelectChecks checks --only and --skip against the protocol's checks.
	SelectChecks(only, skip []string) error
	// DialFirst says whether probe checks that one connection can be made
	// (and a TLS certificate verifies) before the checks. FastCGI does
	// not: some backends exit on a connection without a request.
	DialFirst() bool
}

// UnreachableError is a probe's error when the target cannot be reached.
type UnreachableError struct{ Err error }

// Error is the cause's message.
func (e *UnreachableError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *UnreachableError) Unwrap() error { return e.Err }

var (
	mu       sync.RWMutex
	byScheme = map[string]Protocol{}
	all      []Protocol
)

// The built-in protocols are registered when the package is loaded: HTTP
// (http.go) and FastCGI (fcgi.go), in that order.
func init() {
	MustRegister(HTTP{})
	MustRegister(FCGI{})
}

// Register adds p to the registry under each of its schemes and makes the
// URL parser accept them (sockets.RegisterScheme, for the schemes it does
// not know yet). It is meant for package init and test setup; a scheme
// already taken is an error.
func Register(p Protocol) error {
	mu.Lock()
	defer mu.Unlock()
	for _, s := range p.Schemes() {
		if _, ok := byScheme[s.Name]; ok {
			return fmt.Errorf("protocol: scheme %q is already registered", s.Name)
		}
	}
	for _, s := range p.Schemes() {
		if err := sockets.RegisterScheme(s.Name, s.Port, s.TLS); err != nil {
			return fmt.Errorf("protocol: %w", err)
		}
		byScheme[s.Name] = p
	}
	all = append(all, p)
	return nil
}

// MustRegister is Register that panics on an error (package init).
func MustRegister(p Protocol) {
	if err := Register(p); err != nil {
		panic(err)
	}
}

// Lookup returns the protocol of a scheme (in lower case, as
// sockets.Target.Scheme and stats.TargetInfo.Protocol hold it). A scheme
// without a protocol is an error worded as the URL parser's.
func Lookup(scheme string) (Protocol, error) {
	mu.RLock()
	p, ok := byScheme[scheme]
	mu.RUnlock()
	if !ok {
		return nil, errors.New(sockets.UnknownSchemeError(scheme))
	}
	return p, nil
}

// Of returns the protocol of a target (see Lookup).
func Of(t sockets.Target) (Protocol, error) { return Lookup(t.Scheme) }

// OfURL returns the protocol of a URL as typed, by its scheme
// (sockets.SchemeOf), before the URL is parsed.
func OfURL(raw string) (Protocol, error) { return Lookup(sockets.SchemeOf(raw)) }

// Registered returns the registered protocols, in the order they were
// registered.
func Registered() []Protocol {
	mu.RLock()
	defer mu.RUnlock()
	return slices.Clone(all)
}

// Package execute runs one load test: it takes a Plan (the target and its
// upstreams, the request, the load shape, the client's options, what to
// sample of the backend) and returns the run's stats.Record. Every command
// that puts load on a backend (bench, each level of sweep) goes through Run;
// package main only parses flags into a Plan and renders records.
//
// Run raises the file limit, applies the client's scheduling policy and
// thread cap, checks the Unix socket paths (it opens no connection without a
// request: whether the target answers is decided by the run's own first
// dials, Watch), builds the protocol's clients, runs the closed or the open
// model, samples the backend (/proc, php-fpm's status page) and the kernel's
// listen queue counters, and completes the record: wall-clock times,
// environment, client health, TLS session, per-upstream parts, and notes
// from the typed failure causes and the responses.
//
// The models drive load. In the closed model (Closed), C workers each send
// one request at a time over their own client until a shared request budget
// or a time limit runs out. In the open model (Open), requests are scheduled
// at a constant rate and C is only the ceiling of requests in flight.
//
// Counts are exact: the budget is one atomic counter, so N requests are sent
// whatever N mod C is, and every request that was sent is recorded once,
// except those in flight when the run's window closes (Outcome.Drained).
//
// A run has two ends. Its window closes at its time limit (or when its
// Watch stops it): from then on no request starts, and the requests in
// flight are left to finish, within the client's request timeout, on the
// connections they were sent on; they are drained, not counted (neither
// complete nor failed), so that the counts and rates are those of the
// window. Only the end of the caller's context (an interrupt) cuts them:
// the clients are made with that context, never with the window's, for a
// connection closed after a request began and before its answer kills some
// backends (Ruby's fcgi.rb exits on it). A frontend does not do that at
// the end of a measurement window, and neither does a run.
//
// The models know no protocol: clients arrive through a load.ClientFactory.
//
// Presentation stays with the caller: progress display is a hook
// (Options.Progress), and the record is rendered by package report.
package execute

import (
	"crypto/tls"
	"io"
	"slices"
	"time"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/protocol"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/sockets"
)

// Plan is a validated description of one run. The zero value of an
// optional field means "none" or the default named in its comment.
type Plan struct {
	// Target is the URL's target (its address replaced by --unix-socket).
	Target sockets.Target
	// Upstreams are the addresses of a cluster target (a port range or
	// --upstream); Balance spreads connections over them. Empty: the
	// target's own address.
	Upstreams []sockets.Addr
	Balance   sockets.Balance
	// TLS configures an https target (nil for http and fcgi).
	TLS *tls.Config

	// Proto is the target's protocol (protocol.Lookup of its scheme);
	// nil: looked up from Target when needed. ProtoOptions are the
	// protocol's own request options, as its Options method returned them
	// (FastCGI's document root and params, HTTP's version); nil: the
	// protocol's defaults.
	Proto        protocol.Protocol
	ProtoOptions any

	// Method, Headers and Body make the request; ContentType is the
	// body's type.
	Method      string
	Headers     [][2]string
	Body        []byte
	ContentType string

	// Mix, when not empty, are the requests of a mix (--targets), sent in
	// the order of Schedule (internal/targets.Schedule: the run's k-th
	// request sends Mix[Schedule[k % len(Schedule)]]) instead of the
	// request above; Labels name them ("METHOD URL") and Weights weigh
	// them, for the record.
	Mix      []protocol.Variant
	Schedule []int32
	Labels   []string
	Weights  []int
	// Replay describes the access log a mix was read from (--access-log);
	// nil otherwise.
	Replay *stats.Replay

	// Shape is the load's own shape: its concurrency (the in-flight
	// ceiling in the open model), budget (0: none, the time limit
	// applies), time limit, rate and stages; one home from the flag to
	// the record (Record keeps it as it is).
	stats.Shape
	// Timeout bounds one request, from dial to last byte.
	Timeout time.Duration
	// KeepAlive keeps connections open (HTTP keep-alive, FCGI_KEEP_CONN).
	KeepAlive bool
	// VariableLength turns ab's Length rule off.
	VariableLength bool
	// ABCompat uses ab's own arithmetic for the report (keeps every row).
	ABCompat bool

	// Threads caps the client's GOMAXPROCS during the run (0: AutoThreads
	// decides).
	Threads int
	// Engine runs the workers: auto (or ""), poller or uring (see
	// ResolveEngine).
	Engine string
	// Sched is the client threads' scheduling policy: "normal", "batch",
	// or "" for the one backbench was started with.
	Sched string
	// ClientCPUs, when not empty, are the CPUs every thread of the client
	// runs on (--client-cpus, a study's client_cpus): Prepare sets them,
	// and caps GOMAXPROCS at their count unless Threads says otherwise.
	ClientCPUs []int

	// KeepSecrets keeps the credentials of the target's URL (the password
	// of its user information, the values of its query parameters that
	// load.SecretQuery marks) in what Record and ShownURL return
	// (--keep-secrets). By default they read load.Redacted there; the
	// requests sent carry them whatever it says.
	KeepSecrets bool

	// BackendPIDs are sampled from /proc during the run, with their
	// descendants; FPMStatus is php-fpm's status path, read at the start
	// and the end (fcgi only).
	BackendPIDs []int
	FPMStatus   string

	// Factory, when not nil, makes the clients instead of the protocol
	// package named by Target (tests, and commands that bring their own
	// client).
	Factory load.ClientFactory

	dialer *sockets.Dialer // built once by Prepare
}

// Protocol returns the plan's protocol: Proto, or the protocol of the
// target's scheme (looked up each time, not kept: a plan may be read by
// several goroutines, and a command sets Proto once).
func (p *Plan) Protocol() (protocol.Protocol, error) {
	if p.Proto != nil {
		return p.Proto, nil
	}
	return protocol.Of(p.Target)
}

// Request returns the plan's request as every protocol takes it; verbose,
// if not nil, receives request and response heads.
func (p *Plan) Request(verbose io.Writer) protocol.Request {
	r := p.request()
	r.Dialer, r.Verbose = p.Dialer(), verbose
	return r
}

// request is the request without a dialer: what a protocol records of it
// (Record is called before a run, and must not make the run's dialer).
func (p *Plan) request() protocol.Request {
	return protocol.Request{Target: p.Target, Method: p.Method, Headers: p.Headers, Body: p.Body,
		ContentType: p.ContentType, KeepAlive: p.KeepAlive, Timeout: p.Timeout, Mix: p.Mix}
}

// ShownURL is the target's URL as every result and message shows it:
// its credentials replaced by load.Redacted (load.RedactURL) unless
// KeepSecrets.
func (p *Plan) ShownURL() string {
	if p.KeepSecrets {
		return p.Target.URL
	}
	return load.RedactURL(p.Target.URL)
}

// Record returns the plan as the record keeps it, with what its protocol
// adds (HTTP's version and Connection header, the report's words). The
// URL and the document path hold the query's credentials only with
// KeepSecrets (ShownURL).
func (p *Plan) Record() stats.Plan {
	t := p.Target
	path := t.RequestURI()
	if !p.KeepSecrets {
		path = load.RedactQuery(path)
	}
	rp := stats.Plan{
		Target:         stats.TargetInfo{URL: p.ShownURL(), Protocol: t.Scheme, Network: t.Network, Address: t.Address},
		Hostname:       t.Host,
		Port:           t.Port,
		Path:           path,
		Shape:          p.Shape,
		Timeout:        p.Timeout,
		KeepAlive:      p.KeepAlive,
		Method:         p.Method,
		BodySize:       int64(len(p.Body)),
		ABCompat:       p.ABCompat,
		VariableLength: p.VariableLength,
		Balance:        p.Balance.String(),
	}
	for _, a := range p.Upstreams {
		rp.Upstreams = append(rp.Upstreams, a.String())
	}
	if len(p.Mix) > 0 {
		rp.Targets, rp.Weights = slices.Clone(p.Labels), slices.Clone(p.Weights)
		rp.Replay = p.Replay
	}
	if t.Port == "" { // nginx-style Unix target
		rp.Hostname = "unix:" + t.Address
	}
	if pr, err := p.Protocol(); err == nil {
		pr.Record(p.request(), p.ProtoOptions, &rp)
	}
	return rp
}

// Dialer returns the Dialer of a cluster or TLS target, made once; nil
// when the clients' own plain dialer will do.
func (p *Plan) Dialer() *sockets.Dialer {
	if p.dialer != nil {
		return p.dialer
	}
	switch {
	case len(p.Upstreams) <= 1 && p.TLS == nil:
		if len(p.Upstreams) == 1 {
			p.dialer = sockets.NewClusterDialer(p.Target, sockets.DialerOptions{Upstreams: p.Upstreams, Timeout: p.Timeout})
		}
	default:
		p.dialer = sockets.NewClusterDialer(p.Target, sockets.DialerOptions{Upstreams: p.Upstreams, Balance: p.Balance,
			TLS: p.TLS, Timeout: p.Timeout})
	}
	return p.dialer
}

// ClientFactory builds the client factory of the plan's protocol (or
// returns Plan.Factory). verbose, if not nil, receives request and response
// heads.
func (p *Plan) ClientFactory(verbose io.Writer) (load.ClientFactory, error) {
	if p.Factory != nil {
		return p.Factory, nil
	}
	pr, err := p.Protocol()
	if err != nil {
		return nil, err
	}
	return pr.Factory(p.Request(verbose), p.ProtoOptions)
}

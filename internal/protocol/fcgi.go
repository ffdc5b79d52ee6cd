package protocol

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/backbench/backbench/fcgi"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/sockets"
)

// FCGI is FastCGI's RESPONDER role over fcgi:// URLs (package fcgi).
type FCGI struct{}

// FCGIOptions are FastCGI's request options, what FCGI.Options returns.
type FCGIOptions struct {
	// DocumentRoot is DOCUMENT_ROOT, absolute; SCRIPT_FILENAME is it
	// joined with the request path.
	DocumentRoot string
	// Params are --param overrides, applied last.
	Params [][2]string
}

// Name is "fcgi".
func (FCGI) Name() string { return sockets.SchemeFCGI }

// Schemes is fcgi:// (port 9000, php-fpm's usual one).
func (FCGI) Schemes() []Scheme {
	return []Scheme{{Name: sockets.SchemeFCGI, Port: sockets.DefaultPort(sockets.SchemeFCGI)}}
}

// Check refuses --http1.0.
func (FCGI) Check(f Flags) error {
	if f.HTTP10 {
		return errors.New("--http1.0 applies to http:// targets only")
	}
	return nil
}

// Options makes the document root absolute (the current directory when
// none is given).
func (p FCGI) Options(f Flags) (any, error) {
	if err := p.Check(f); err != nil {
		return nil, err
	}
	dr := f.DocumentRoot
	if dr == "" {
		var err error
		if dr, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("cannot find the current directory for --document-root: %v", err)
		}
	}
	root, err := filepath.Abs(dr)
	if err != nil {
		return nil, fmt.Errorf("bad --document-root %q: %v", f.DocumentRoot, err)
	}
	return FCGIOptions{DocumentRoot: root, Params: f.Params}, nil
}

// fcgiOptions returns opts as FCGIOptions; a plan made without Options
// (a test's) has none, and sends DOCUMENT_ROOT "/".
func fcgiOptions(opts any) FCGIOptions {
	o, _ := opts.(FCGIOptions)
	return o
}

// config is the fcgi.Config of a request.
func fcgiConfig(r Request, opts any) fcgi.Config {
	o := fcgiOptions(opts)
	return fcgi.Config{
		Target: r.Target, Method: r.Method, Headers: r.Headers, Body: r.Body,
		ContentType: r.ContentType, DocumentRoot: o.DocumentRoot, Params: o.Params,
		KeepAlive: r.KeepAlive, Timeout: r.Timeout, Verbose: r.Verbose, Dialer: r.Dialer,
	}
}

// Factory returns fcgi's client factory; a mix's requests each set their
// own REQUEST_METHOD, REQUEST_URI, QUERY_STRING, SCRIPT_NAME,
// SCRIPT_FILENAME (the document root joined with the path), CONTENT_TYPE
// and CONTENT_LENGTH (fcgi.Params).
func (FCGI) Factory(r Request, opts any) (load.ClientFactory, error) {
	cfg := fcgiConfig(r, opts)
	for _, v := range r.Mix {
		cfg.Mix = append(cfg.Mix, fcgiConfig(v.Apply(r), opts))
	}
	return fcgi.NewFactory(cfg)
}

// Record names FastCGI, FCGI_KEEP_CONN and its stderr stream for the
// report.
func (FCGI) Record(r Request, _ any, rp *stats.Plan) {
	kc := "FCGI_KEEP_CONN clear"
	if r.KeepAlive {
		kc = "FCGI_KEEP_CONN set"
	}
	rp.Wire = &stats.Wire{Protocol: "FastCGI (RESPONDER)", KeepAlive: kc, Stderr: "FastCGI stderr"}
}

// ScriptFilename is the SCRIPT_FILENAME param a request sends.
func ScriptFilename(r Request, opts any) string {
	v := ""
	for _, kv := range fcgi.Params(fcgiConfig(r, opts)) {
		if kv[0] == "SCRIPT_FILENAME" {
			v = kv[1]
		}
	}
	return v
}

// ScriptFilename is the SCRIPT_FILENAME param a request sends
// (ScriptNamer).
func (FCGI) ScriptFilename(r Request, opts any) string { return ScriptFilename(r, opts) }

// Notes are FastCGI's words.
func (FCGI) Notes() Notes {
	return Notes{
		KeepAlive:     "FCGI_KEEP_CONN",
		AfterResponse: "after END_REQUEST",
		Reconnects:    "FastCGI servers that recycle workers do this",
		ClosedEvery: func(*stats.Summary) string {
			return " (each request after the first of a connection found it closed and was redialed), so every request paid a new connection, as without -k"
		},
		AllNon2xx: func(_ *stats.Summary, r Request, opts any, said string) string {
			n := fmt.Sprintf("SCRIPT_FILENAME was %s: check the URL's path and --document-root (default: the current directory), "+
				"or set --param SCRIPT_FILENAME=/path/to/script", ScriptFilename(r, opts))
			if said != "" {
				n += "; " + said
			}
			return n
		},
	}
}

// RingByDefault is false: with or without KEEP_CONN (to php-fpm) the ring
// engine was measured to cost more client CPU than the poller.
func (FCGI) RingByDefault(bool) bool { return false }

// Fetch sends the request once on a fresh connection (fcgi.Fetch) and
// returns its CGI status and body.
func (FCGI) Fetch(ctx context.Context, r Request, opts any) (int, []byte, error) {
	cfg := fcgiConfig(r, opts)
	cfg.Verbose = nil
	status, body, err := fcgi.Fetch(ctx, cfg)
	if len(body) > MaxFetchBody {
		body = body[:MaxFetchBody]
	}
	return status, body, err
}

// ReadStatus reads php-fpm's status page (pm.status_path) at path.
func (FCGI) ReadStatus(ctx context.Context, r Request, opts any, path string) map[string]string {
	t := r.Target
	t.Path, t.RawQuery = path, ""
	status, body, err := fcgi.Fetch(ctx, fcgi.Config{Target: t, Method: "GET", DocumentRoot: fcgiOptions(opts).DocumentRoot,
		Timeout: r.Timeout, Dialer: r.Dialer})
	switch {
	case err != nil:
		return map[string]string{"error": err.Error()}
	case status != 200:
		return map[string]string{"error": fmt.Sprintf("status %d (is pm.status_path = %s set?)", status, path)}
	}
	return fcgi.ParseFPMStatus(body)
}

// SelectChecks checks --only and --skip against fcgi's checks.
func (FCGI) SelectChecks(only, skip []string) error {
	_, err := fcgi.SelectChecks(only, skip)
	return err
}

// DialFirst is false: a FastCGI backend may exit on a connection without
// a request (Ruby's fcgi.rb does); the first check's own dial decides
// reachability.
func (FCGI) DialFirst() bool { return false }

// Probe runs fcgi's probe.
func (FCGI) Probe(ctx context.Context, r ProbeRequest) (*ProbeResult, error) {
	o := fcgiOptions(r.Options)
	tgt := r.Target
	rep, err := fcgi.Probe(ctx, fcgi.ProbeConfig{
		Config: fcgi.Config{Target: tgt, Headers: r.Headers, DocumentRoot: o.DocumentRoot,
			Params: o.Params, Timeout: r.Timeout},
		MaxRequests: r.MaxRequests, Only: r.Only, Skip: r.Skip,
	})
	if errors.Is(err, fcgi.ErrUnreachable) {
		return nil, &UnreachableError{Err: fmt.Errorf("cannot connect to %s %s: %s", tgt.Network, tgt.Address,
			strings.TrimPrefix(err.Error(), fcgi.ErrUnreachable.Error()+": "))}
	}
	if err != nil {
		return nil, err
	}
	return &ProbeResult{Lines: probeLines(rep.Lines()), Summary: rep.Summary(), Report: rep}, nil
}

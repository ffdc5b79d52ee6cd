package protocol

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/backbench/backbench/httpprobe"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/sockets"
)

// HTTP is HTTP/1.1 and HTTP/1.0 over http:// and https:// URLs (package
// httpprobe).
type HTTP struct{}

// HTTPOptions are HTTP's request options, what HTTP.Options returns.
type HTTPOptions struct {
	// HTTP10 sends HTTP/1.0 requests (--http1.0).
	HTTP10 bool
}

// Name is "http".
func (HTTP) Name() string { return sockets.SchemeHTTP }

// Schemes are http:// (port 80) and https:// (443, TLS).
func (HTTP) Schemes() []Scheme {
	return []Scheme{
		{Name: sockets.SchemeHTTP, Port: sockets.DefaultPort(sockets.SchemeHTTP)},
		{Name: sockets.SchemeHTTPS, Port: sockets.DefaultPort(sockets.SchemeHTTPS), TLS: true},
	}
}

// Check refuses FastCGI's options.
func (HTTP) Check(f Flags) error {
	switch {
	case f.DocumentRoot != "" || len(f.Params) > 0:
		return errors.New("--document-root and --param apply to fcgi:// targets only")
	case f.FPMStatus != "":
		return errors.New("--fpm-status applies to fcgi:// targets only")
	}
	return nil
}

// Options returns the HTTP version asked for.
func (p HTTP) Options(f Flags) (any, error) {
	if err := p.Check(f); err != nil {
		return nil, err
	}
	return HTTPOptions{HTTP10: f.HTTP10}, nil
}

func httpConfig(r Request, opts any) httpprobe.Config {
	o, _ := opts.(HTTPOptions)
	return httpprobe.Config{
		Target: r.Target, Method: r.Method, Headers: r.Headers, Body: r.Body,
		ContentType: r.ContentType, KeepAlive: r.KeepAlive, HTTP10: o.HTTP10,
		Timeout: r.Timeout, Verbose: r.Verbose, Dialer: r.Dialer,
	}
}

// Factory returns httpprobe's client factory.
func (HTTP) Factory(r Request, opts any) (load.ClientFactory, error) {
	cfg := httpConfig(r, opts)
	for _, v := range r.Mix {
		cfg.Mix = append(cfg.Mix, httpConfig(v.Apply(r), opts))
	}
	return httpprobe.NewFactory(cfg)
}

// Fetch sends the request once on a fresh connection with Connection:
// close and returns the status and the body (net/http reads the response,
// which a verification request may afford).
func (HTTP) Fetch(ctx context.Context, r Request, opts any) (int, []byte, error) {
	cfg := httpConfig(r, opts)
	cfg.KeepAlive, cfg.Verbose = false, nil
	req, err := httpprobe.BuildRequest(cfg)
	if err != nil {
		return 0, nil, err
	}
	conn, err := sockets.SendOnce(ctx, cfg.Dialer, cfg.Target, cfg.Timeout, req, "http")
	if err != nil {
		return 0, nil, err
	}
	defer conn.Close()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, nil, fmt.Errorf("http: read: %s", sockets.Describe(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxFetchBody))
	if err != nil {
		return resp.StatusCode, body, fmt.Errorf("http: read body: %s", sockets.Describe(err))
	}
	return resp.StatusCode, body, nil
}

// Record sets the HTTP version and the Connection header sent, and the
// report's words for them.
func (HTTP) Record(r Request, opts any, rp *stats.Plan) {
	cfg := httpConfig(r, opts)
	rp.HTTPVersion = "1.1"
	if cfg.HTTP10 {
		rp.HTTPVersion = "1.0"
	}
	rp.ConnectionHeader = httpprobe.ConnectionHeader(cfg)
	w := &stats.Wire{Protocol: "HTTP/" + rp.HTTPVersion, KeepAlive: "Connection: " + rp.ConnectionHeader}
	if rp.ConnectionHeader == "" {
		w.KeepAlive = w.Protocol + ", no Connection header sent"
	}
	rp.Wire = w
}

// Notes are HTTP's words.
func (HTTP) Notes() Notes {
	return Notes{
		KeepAlive:     "keep-alive",
		AfterResponse: "after the response body",
		Reconnects:    "HTTP servers do this past their limit of kept connections or their idle timeout: Thin keeps at most 100 by default",
		ClosedEvery: func(s *stats.Summary) string {
			if s.HTTPVersion == "1.0" {
				return " over HTTP/1.0 (a response without Content-Length can only end with the close: nginx before a FastCGI app does this), " +
					"so every request paid a new connection; try -k without --http1.0"
			}
			return " (Unicorn and gunicorn's sync workers never keep a connection), so every request paid a new connection, as without -k"
		},
		AllNon2xx: func(*stats.Summary, Request, any, string) string {
			return "check the URL's path, the Host header (-H 'Host: NAME') and the method"
		},
	}
}

// RingByDefault is true without keep-alive: there the ring engine costs
// less client CPU per request than the poller (docs/performance.md); with
// keep-alive it costs more.
func (HTTP) RingByDefault(keepAlive bool) bool { return !keepAlive }

// SelectChecks checks --only and --skip against httpprobe's checks.
func (HTTP) SelectChecks(only, skip []string) error {
	_, err := httpprobe.SelectChecks(only, skip)
	return err
}

// DialFirst is true: probe opens one connection (and for https verifies
// the certificate) before the checks.
func (HTTP) DialFirst() bool { return true }

// Probe runs httpprobe's probe.
func (HTTP) Probe(ctx context.Context, r ProbeRequest) (*ProbeResult, error) {
	rep, err := httpprobe.Probe(ctx, httpprobe.ProbeConfig{Target: r.Target, Headers: r.Headers, Dialer: r.Dialer,
		Timeout: r.Timeout, IdleMax: r.IdleMax, MaxRequests: r.MaxRequests, Only: r.Only, Skip: r.Skip})
	if err != nil {
		return nil, err
	}
	return &ProbeResult{Lines: probeLines(rep.Lines()), Summary: rep.Summary(), Report: rep}, nil
}

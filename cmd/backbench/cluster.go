package main

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/procstat"
	"github.com/backbench/backbench/internal/protocol"
	"github.com/backbench/backbench/sockets"
)

// targetOptions are the flags that say where the connections go beside the
// URL: more addresses (a cluster of workers), how to spread connections
// over them, and TLS; bench and sweep share them.
type targetOptions struct {
	upstreams []string
	balance   string
	insecure  bool
}

// backendOptions are the flags that say what to sample of the backend
// during a run: its processes and php-fpm's status page.
type backendOptions struct {
	backendPIDs    []int
	backendPIDFile string
	fpmStatus      string
}

func addTargetFlags(fs *pflag.FlagSet, o *targetOptions) {
	fs.StringArrayVar(&o.upstreams, "upstream", nil, "spread connections over this address too: tcp:HOST:PORT or unix:/path (repeatable; replaces the URL's address)")
	fs.StringVar(&o.balance, "balance", "round-robin", "how connections are spread over several addresses: round-robin or least-conn")
	fs.BoolVar(&o.insecure, "insecure", false, "https: accept any server certificate (self-signed)")
}

func addBackendFlags(fs *pflag.FlagSet, o *backendOptions) {
	fs.IntSliceVar(&o.backendPIDs, "backend-pid", nil, "sample this backend process and its descendants from /proc during the run (repeatable)")
	fs.StringVar(&o.backendPIDFile, "backend-pidfile", "", "like --backend-pid, with the PID read from FILE")
	fs.StringVar(&o.fpmStatus, "fpm-status", "", "fcgi: read php-fpm's status page at PATH (pm.status_path) at the start and end of the run")
}

// cluster is the validated form of targetOptions.
type cluster struct {
	upstreams []sockets.Addr
	balance   sockets.Balance
	tls       *tls.Config
}

// parseTargets expands a URL with a port range into its upstreams and
// returns the target (the first URL) and the cluster settings.
func parseTargets(url string, o *targetOptions) (sockets.Target, cluster, error) {
	var cl cluster
	urls, err := sockets.ExpandPorts(url)
	if err != nil {
		return sockets.Target{}, cl, usagef("%v", err)
	}
	tgt, err := sockets.ParseTarget(urls[0])
	if err != nil {
		return tgt, cl, usagef("%v", err)
	}
	tgt.URL = url
	if len(urls) > 1 {
		if len(o.upstreams) > 0 {
			return tgt, cl, usagef("use either a {A..B} port range or --upstream, not both")
		}
		for _, u := range urls {
			t, err := sockets.ParseTarget(u)
			if err != nil {
				return tgt, cl, usagef("%v", err)
			}
			cl.upstreams = append(cl.upstreams, sockets.Addr{Network: t.Network, Address: t.Address})
		}
	}
	for _, u := range o.upstreams {
		a, err := sockets.ParseAddr(u)
		if err != nil {
			return tgt, cl, usagef("--upstream: %v", err)
		}
		cl.upstreams = append(cl.upstreams, a)
	}
	if cl.balance, err = sockets.ParseBalance(o.balance); err != nil {
		return tgt, cl, usagef("--balance: %v", err)
	}
	if tgt.UsesTLS() {
		// The name to verify, as curl does: a host name against the
		// certificate's DNS names, an IP address against its IP
		// addresses (and then no SNI is sent).
		cl.tls = &tls.Config{ServerName: tgt.Host, InsecureSkipVerify: o.insecure,
			ClientSessionCache: tls.NewLRUClientSessionCache(1024)}
	} else if o.insecure {
		return tgt, cl, usagef("--insecure applies to https:// targets only")
	}
	return tgt, cl, nil
}

// withUnixSocket applies --unix-socket (path, when set) to tgt, a target
// of the given number of upstreams.
func withUnixSocket(tgt sockets.Target, path string, upstreams int) (sockets.Target, error) {
	if path == "" {
		return tgt, nil
	}
	if upstreams > 0 {
		return tgt, usagef("--unix-socket and several upstreams do not mix; use --upstream unix:/path")
	}
	if !filepath.IsAbs(path) && !filepath.IsLocal(path) {
		return tgt, usagef("bad --unix-socket %q", path)
	}
	return tgt.WithUnixSocket(path), nil
}

// requestParts checks the request flags that bench, sweep and probe share
// (-H, --param, --document-root, --http1.0) for a target of the protocol
// pr and returns the headers and the protocol's options (FastCGI's params
// and absolute document root, the current directory by default; HTTP's
// version). The protocol refuses the options it does not take, before
// any is parsed.
func requestParts(pr protocol.Protocol, headers, params []string, docRoot string, http10 bool) (hs [][2]string, opts any, err error) {
	if err := pr.Check(looseFlags(params, docRoot, http10)); err != nil {
		return nil, nil, usagef("%v", err)
	}
	if headers, err = headerFiles(headers); err != nil {
		return nil, nil, err
	}
	for _, h := range headers {
		kv, err := parseHeader(h)
		if err != nil {
			return nil, nil, err
		}
		hs = append(hs, kv)
	}
	f := protocol.Flags{DocumentRoot: docRoot, HTTP10: http10}
	for _, p := range params {
		kv, err := parseParam(p)
		if err != nil {
			return nil, nil, err
		}
		f.Params = append(f.Params, kv)
	}
	if opts, err = pr.Options(f); err != nil {
		return nil, nil, usagef("%v", err)
	}
	return hs, opts, nil
}

// looseFlags are the request options as given, the params not checked
// yet: enough for Protocol.Check, which asks only which are set.
func looseFlags(params []string, docRoot string, http10 bool) protocol.Flags {
	f := protocol.Flags{DocumentRoot: docRoot, HTTP10: http10}
	for _, p := range params {
		name, value, _ := strings.Cut(p, "=")
		f.Params = append(f.Params, [2]string{name, value})
	}
	return f
}

// targetProtocol returns the protocol of a parsed target.
func targetProtocol(t sockets.Target) (protocol.Protocol, error) {
	pr, err := protocol.Of(t)
	if err != nil {
		return nil, usagef("target %q: %v", t.URL, err)
	}
	return pr, nil
}

// parseBackend checks what to sample of the backend of a target of the
// protocol pr and sets it in p.
func parseBackend(o *backendOptions, pr protocol.Protocol, p *execute.Plan) error {
	p.BackendPIDs = append([]int(nil), o.backendPIDs...)
	if o.backendPIDFile != "" {
		b, err := os.ReadFile(o.backendPIDFile)
		if err != nil {
			return usagef("cannot read --backend-pidfile: %v", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			return usagef("--backend-pidfile %s: no PID in it", o.backendPIDFile)
		}
		p.BackendPIDs = append(p.BackendPIDs, pid)
	}
	if len(p.BackendPIDs) > 0 {
		if err := procstat.Check(p.BackendPIDs); err != nil {
			return usagef("%v", err)
		}
	}
	if o.fpmStatus != "" {
		if err := pr.Check(protocol.Flags{FPMStatus: o.fpmStatus}); err != nil {
			return usagef("%v", err)
		}
		if !strings.HasPrefix(o.fpmStatus, "/") {
			return usagef("--fpm-status %q: want a path starting with /", o.fpmStatus)
		}
		p.FPMStatus = o.fpmStatus
	}
	return nil
}

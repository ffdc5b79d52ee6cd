package main

import (
	"crypto/tls"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/internal/procstat"
	"github.com/backbench/backbench/sockets"
)

// clusterOptions are the flags for clusters of workers, the backend's
// resource use and TLS; bench and sweep share them.
type clusterOptions struct {
	upstreams      []string
	balance        string
	insecure       bool
	backendPIDs    []int
	backendPIDFile string
	fpmStatus      string
}

func addClusterFlags(fs *pflag.FlagSet, o *clusterOptions) {
	fs.StringArrayVar(&o.upstreams, "upstream", nil, "spread connections over this address too: tcp:HOST:PORT or unix:/path (repeatable; replaces the URL's address)")
	fs.StringVar(&o.balance, "balance", "round-robin", "how connections are spread over several addresses: round-robin or least-conn")
	fs.BoolVar(&o.insecure, "insecure", false, "https: accept any server certificate (self-signed)")
	fs.IntSliceVar(&o.backendPIDs, "backend-pid", nil, "sample this backend process and its descendants from /proc during the run (repeatable)")
	fs.StringVar(&o.backendPIDFile, "backend-pidfile", "", "like --backend-pid, with the PID read from FILE")
	fs.StringVar(&o.fpmStatus, "fpm-status", "", "fcgi: read php-fpm's status page at PATH (pm.status_path) at the start and end of the run")
}

// cluster is the validated form of clusterOptions.
type cluster struct {
	upstreams []sockets.Addr
	balance   sockets.Balance
	tls       *tls.Config
	pids      []int
	fpmStatus string
}

// parseTargets expands a URL with a port range into its upstreams and
// returns the target (the first URL) and the cluster settings.
func parseTargets(url string, o *clusterOptions) (sockets.Target, cluster, error) {
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
	if tgt.Scheme == sockets.SchemeHTTPS {
		name := tgt.Host
		if net.ParseIP(name) != nil {
			name = ""
		}
		cl.tls = &tls.Config{ServerName: name, InsecureSkipVerify: o.insecure,
			ClientSessionCache: tls.NewLRUClientSessionCache(1024)}
	} else if o.insecure {
		return tgt, cl, usagef("--insecure applies to https:// targets only")
	}
	cl.pids = append(cl.pids, o.backendPIDs...)
	if o.backendPIDFile != "" {
		b, err := os.ReadFile(o.backendPIDFile)
		if err != nil {
			return tgt, cl, usagef("cannot read --backend-pidfile: %v", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			return tgt, cl, usagef("--backend-pidfile %s: no PID in it", o.backendPIDFile)
		}
		cl.pids = append(cl.pids, pid)
	}
	if len(cl.pids) > 0 {
		if err := procstat.Check(cl.pids); err != nil {
			return tgt, cl, usagef("%v", err)
		}
	}
	if o.fpmStatus != "" {
		if tgt.Scheme != sockets.SchemeFCGI {
			return tgt, cl, usagef("--fpm-status applies to fcgi:// targets only")
		}
		if !strings.HasPrefix(o.fpmStatus, "/") {
			return tgt, cl, usagef("--fpm-status %q: want a path starting with /", o.fpmStatus)
		}
		cl.fpmStatus = o.fpmStatus
	}
	return tgt, cl, nil
}

package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/fcgi"
	"github.com/backbench/backbench/internal/procstat"
	"github.com/backbench/backbench/internal/stats"
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
		// The name to verify, as curl does: a host name against the
		// certificate's DNS names, an IP address against its IP
		// addresses (and then no SNI is sent).
		cl.tls = &tls.Config{ServerName: tgt.Host, InsecureSkipVerify: o.insecure,
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

// dialer returns the Dialer for a cluster or TLS target; nil when the
// clients' own plain dialer will do.
func (cl *cluster) dialer(t sockets.Target, timeout time.Duration) *sockets.Dialer {
	if len(cl.upstreams) <= 1 && cl.tls == nil {
		if len(cl.upstreams) == 1 {
			a := cl.upstreams[0]
			return sockets.NewClusterDialer(t, sockets.DialerOptions{Upstreams: []sockets.Addr{a}, Timeout: timeout})
		}
		return nil
	}
	return sockets.NewClusterDialer(t, sockets.DialerOptions{Upstreams: cl.upstreams, Balance: cl.balance, TLS: cl.tls, Timeout: timeout})
}

// checkSockets checks, without connecting, the Unix socket paths of the
// target or of its upstreams (sockets.StatUnix): a connection without a
// request takes some servers down, so reachability over the network is
// decided by the run's own dials (run.Watch). It fails only when no
// address is left; a bad path in a cluster is reported on stderr and shows
// in the report as that address's connect failures.
func checkSockets(t sockets.Target, ups []sockets.Addr, stderr io.Writer) error {
	if len(ups) == 0 {
		return sockets.StatUnix(t)
	}
	var firstErr error
	ok := 0
	for _, a := range ups {
		ut := t
		ut.Network, ut.Address = a.Network, a.Address
		if err := sockets.StatUnix(ut); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			if len(ups) > 1 {
				fmt.Fprintf(stderr, "backbench: warning: upstream %s: %v\n", a, err)
			}
			continue
		}
		ok++
	}
	if ok == 0 {
		return firstErr
	}
	return nil
}

// dialError words a dial failure of upstream i (of ups; the target itself
// when ups is empty) as the unreachable error of exit status 1.
func dialError(t sockets.Target, ups []sockets.Addr, i int, err error) error {
	network, address := t.Network, t.Address
	if i >= 0 && i < len(ups) {
		network, address = ups[i].Network, ups[i].Address
	}
	hint := ""
	if sockets.IsUnverified(err) {
		hint = "; --insecure accepts it"
	}
	return fmt.Errorf("cannot connect to %s %s: %s%s", network, address, strings.TrimPrefix(err.Error(), "connect: "), hint)
}

// warnDeadUpstreams reports on stderr the upstreams of a cluster that no
// dial of the run reached (their failures are in the report).
func warnDeadUpstreams(t sockets.Target, ups []sockets.Addr, errs []error, stderr io.Writer) {
	if len(ups) < 2 {
		return
	}
	for i, err := range errs {
		if err != nil && i < len(ups) {
			fmt.Fprintf(stderr, "backbench: warning: upstream %s: %v\n", ups[i], dialError(t, ups, i, err))
		}
	}
}

// backendProbe samples the backend's processes and php-fpm's status page
// during a run.
type backendProbe struct {
	cl      *cluster
	req     *request
	sampler *procstat.Sampler
	usage   stats.BackendUsage
}

func startBackendProbe(ctx context.Context, r *request) *backendProbe {
	cl := &r.cluster
	if len(cl.pids) == 0 && cl.fpmStatus == "" {
		return nil
	}
	p := &backendProbe{cl: cl, req: r, usage: stats.BackendUsage{PIDs: cl.pids}}
	if cl.fpmStatus != "" {
		p.usage.FPMStatusStart = p.fpmStatus(ctx)
	}
	if len(cl.pids) > 0 {
		p.sampler = procstat.Start(cl.pids, 0)
	}
	return p
}

// finish stops the sampling and returns the usage (nil without a probe).
func (p *backendProbe) finish(ctx context.Context) *stats.BackendUsage {
	if p == nil {
		return nil
	}
	if p.sampler != nil {
		u := p.sampler.Stop()
		p.usage.CPUUserSeconds, p.usage.CPUSysSeconds = u.UserSeconds, u.SysSeconds
		p.usage.CPUSeconds = u.UserSeconds + u.SysSeconds
		p.usage.PeakRSSBytes, p.usage.MeanRSSBytes = u.PeakRSS, u.MeanRSS
		p.usage.PeakPSSBytes, p.usage.MeanPSSBytes, p.usage.PSSFallback = u.PeakPSS, u.MeanPSS, u.PSSFallback
		p.usage.USSMeanBytes, p.usage.USSMaxBytes = u.USSMean, u.USSMax
		p.usage.ProcessesMax, p.usage.ProcessesMean = u.MaxProcs, u.MeanProcs
		p.usage.Samples = u.Samples
	}
	if p.cl.fpmStatus != "" {
		p.usage.FPMStatusEnd = p.fpmStatus(context.WithoutCancel(ctx))
	}
	return &p.usage
}

// fpmStatus reads php-fpm's status page; on failure the map holds "error".
func (p *backendProbe) fpmStatus(ctx context.Context) map[string]string {
	t := p.req.target
	t.Path, t.RawQuery = p.cl.fpmStatus, ""
	status, body, err := fcgi.Fetch(ctx, fcgi.Config{Target: t, Method: "GET", DocumentRoot: p.req.docRoot,
		Timeout: p.req.opts.timeout, Dialer: p.req.dialer})
	switch {
	case err != nil:
		return map[string]string{"error": err.Error()}
	case status != 200:
		return map[string]string{"error": fmt.Sprintf("status %d (is pm.status_path = %s set?)", status, p.cl.fpmStatus)}
	}
	return fcgi.ParseFPMStatus(body)
}

// tlsInfo describes the TLS sessions of a run (nil without TLS).
func tlsInfo(d *sockets.Dialer, cl *cluster) *stats.TLSInfo {
	if d == nil || cl.tls == nil {
		return nil
	}
	st, hs, res := d.TLSState()
	if st == nil {
		return nil
	}
	info := &stats.TLSInfo{Protocol: tlsVersionName(st.Version), Cipher: tls.CipherSuiteName(st.CipherSuite),
		ServerName: cl.tls.ServerName, Handshakes: hs, Resumed: res}
	if net.ParseIP(info.ServerName) != nil {
		info.ServerName = "" // not sent as SNI
	}
	if st.CurveID != 0 {
		info.TempKey = st.CurveID.String()
	}
	return info
}

// tlsVersionName spells versions as ab (OpenSSL) does: TLSv1.3.
func tlsVersionName(v uint16) string {
	return strings.Replace(tls.VersionName(v), "TLS 1", "TLSv1", 1)
}

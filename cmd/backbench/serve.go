package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/cli"
	"github.com/backbench/backbench/sockets"
)

type serveOptions struct {
	protocol   string
	ignoreTERM bool
	listens    []string
	model      string
	delay      time.Duration
	work       time.Duration
	body       int
	status     int
	keepAlive  string
	fault      string
	faultEvery int
	behaviour  fixtures.Behaviour
	tls        bool
	backlog    int
	processes  int
	preload    int64
	grow       int
}

const serveUsage = `Usage: backbench serve [flags]

Runs built-in backends until SIGINT or SIGTERM, one per --listen address, and
prints one line per address: "listening PROTOCOL NETWORK ADDRESS".

Models: threaded (a goroutine per connection), serial (one connection at a
time; others wait in the backlog), prefork:N (N connections at a time),
evented (all connections accepted, one request processed at a time).

Flags:
`

func newServeFlags(o *serveOptions) *pflag.FlagSet {
	fs := newFlagSet("serve")
	fs.SortFlags = false
	fs.Var(cli.NewChoice(&o.protocol, "http", "fcgi", "http"), "protocol", "protocol to serve: fcgi or http")
	fs.StringArrayVar(&o.listens, "listen", nil, "address: tcp:HOST:PORT or unix:/path.sock (repeatable)")
	fs.StringVar(&o.model, "model", "threaded", "concurrency model: threaded, serial, prefork:N, evented")
	fs.Var(cli.NewSeconds(&o.delay, 0), "delay", "sleep per request (seconds, or a duration: 10ms)")
	fs.Var(cli.NewSeconds(&o.work, 0), "work", "CPU busy time per request (seconds, or a duration: 1ms)")
	fs.IntVar(&o.body, "body", 0, "response body size in bytes")
	fs.IntVar(&o.grow, "grow", 0, "leak BYTES of resident memory per request (a backend whose memory grows by a known amount)")
	fs.IntVar(&o.status, "status", 200, "response status code")
	fs.StringVar(&o.keepAlive, "keepalive", "on", "keep-alive policy: on (honour the client), off, max=N")
	fs.StringVar(&o.fault, "fault", "", "misbehave: name of a fault (listed above; see the README)")
	fs.IntVar(&o.faultEvery, "fault-every", 1, "apply the fault to every K-th request")
	fs.BoolVar(&o.tls, "tls", false, "http: serve https with a fresh self-signed certificate (clients need --insecure)")
	fs.IntVar(&o.backlog, "backlog", 0, "listen backlog (default: net.core.somaxconn, which also caps it)")
	fs.IntVar(&o.processes, "processes", 1, "serve from N processes sharing the listening sockets (a prefork pool: a master and N children, each running --model)")
	fs.Int64Var(&o.preload, "preload", 0, "with --processes: bytes of read-only data mapped and read by the master and every child (code loaded before the fork)")
	fs.BoolVar(&o.ignoreTERM, "ignore-sigterm", false, "ignore SIGTERM (a backend that must be killed: tests of what stops it)")
	addBehaviourFlags(fs, &o.behaviour)
	return fs
}

func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o serveOptions
	fs := newServeFlags(&o)
	if err := parseFlags(fs, strings.TrimSuffix(serveUsage, "Flags:\n")+fixtures.FaultHelp()+"\nFlags:\n", args, stdout); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("serve: unexpected argument %q", fs.Arg(0))
	}
	if len(o.listens) == 0 {
		return usagef("serve: need at least one --listen tcp:HOST:PORT or unix:/path.sock")
	}
	model, err := fixtures.ParseModel(o.model)
	if err != nil {
		return usagef("serve: %v", err)
	}
	ka, err := fixtures.ParseKeepAlive(o.keepAlive)
	if err != nil {
		return usagef("serve: %v", err)
	}
	if o.body < 0 || o.body > 1<<30 {
		return usagef("serve: --body %d: want 0 to 1073741824 bytes", o.body)
	}
	if o.grow < 0 || o.grow > 1<<30 {
		return usagef("serve: --grow %d: want 0 to 1073741824 bytes", o.grow)
	}
	if o.status < 100 || o.status > 999 {
		return usagef("serve: --status %d: want a code from 100 to 999", o.status)
	}
	if o.behaviour.ExitAfter < 0 {
		return usagef("serve: --exit-after must be 0 or more")
	}
	if o.faultEvery < 1 {
		return usagef("serve: --fault-every must be at least 1")
	}
	if o.ignoreTERM {
		// Only SIGINT (or SIGKILL) stops it now.
		signal.Ignore(syscall.SIGTERM)
	}
	if err := fixtures.ValidFault(o.protocol, o.fault); err != nil {
		return usagef("serve: --fault: %v", err)
	}
	switch {
	case o.backlog < 0 || o.backlog > 1<<20:
		return usagef("serve: --backlog %d: want 1 to 1048576 (0: the default)", o.backlog)
	case o.processes < 1 || o.processes > 1024:
		return usagef("serve: --processes %d: want 1 to 1024", o.processes)
	case o.preload < 0 || o.preload > 1<<34:
		return usagef("serve: --preload %d: want 0 to 17179869184 bytes", o.preload)
	case o.preload > 0 && o.processes < 2:
		return usagef("serve: --preload needs --processes 2 or more")
	}
	type addr struct{ network, address string }
	var addrs []addr
	for _, l := range o.listens {
		network, address, ok := strings.Cut(l, ":")
		if !ok || address == "" || (network != "tcp" && network != "unix") {
			return usagef("serve: bad --listen %q: want tcp:HOST:PORT or unix:/path.sock", l)
		}
		addrs = append(addrs, addr{network, address})
	}
	// A backend holding many connections needs many descriptors.
	_, _ = sockets.RaiseNoFileLimit(1 << 20)
	opts := fixtures.Options{Model: model, Delay: o.delay, Work: o.work, BodyBytes: o.body,
		Status: o.status, KeepAlive: ka, Fault: o.fault, FaultEvery: o.faultEvery,
		Behaviour: o.behaviour, Backlog: o.backlog, Grow: o.grow}
	if o.tls {
		if o.protocol != fixtures.ProtoHTTP {
			return usagef("serve: --tls applies to --protocol http only")
		}
		cfg, err := fixtures.SelfSignedTLS()
		if err != nil {
			return err
		}
		opts.TLS = cfg
	}
	if os.Getenv(poolChildEnv) != "" {
		return servePoolChild(ctx, &o, opts)
	}
	if o.processes > 1 {
		var lns []net.Listener
		defer func() {
			for _, ln := range lns {
				ln.Close()
			}
		}()
		for _, a := range addrs {
			ln, err := fixtures.Listen(a.network, a.address, o.backlog)
			if err != nil {
				return &unreachableError{err}
			}
			lns = append(lns, ln)
		}
		return servePool(ctx, &o, args, lns, stdout)
	}
	var servers []*fixtures.Server
	defer func() {
		for _, s := range servers {
			s.Close()
		}
	}()
	for _, a := range addrs {
		s, err := fixtures.Start(o.protocol, a.network, a.address, opts)
		if err != nil {
			return &unreachableError{err}
		}
		servers = append(servers, s)
		proto := o.protocol
		if o.tls {
			proto = "https"
		}
		fmt.Fprintf(stdout, "listening %s %s %s\n", proto, s.Network, s.Addr)
	}
	died := make(chan *fixtures.Server, len(servers))
	for _, s := range servers {
		go func() {
			select {
			case <-s.Died():
				died <- s
			case <-ctx.Done():
			}
		}()
	}
	select {
	case <-ctx.Done():
		return nil
	case s := <-died:
		// A behaviour switch (--die-on-empty-conn, --exit-after,
		// --fcgi-get-values die) plays a backend that exits.
		return fmt.Errorf("serve: the backend on %s %s exited: %s", s.Network, s.Addr, s.DeathReason())
	}
}

// addBehaviourFlags adds serve's flags for the protocol-level behaviours
// that probe tells apart (fixtures.Behaviour).
func addBehaviourFlags(fs *pflag.FlagSet, b *fixtures.Behaviour) {
	fs.Var(cli.NewChoice(&b.KeepConn, fixtures.KeepConnHonour, fixtures.KeepConnHonour, fixtures.KeepConnIgnore, fixtures.KeepConnAlways),
		"fcgi-keep-conn", "FastCGI FCGI_KEEP_CONN: honour, ignore (close after every request) or always (keep even without the flag)")
	fs.Var(cli.NewChoice(&b.Multiplex, fixtures.MuxReject, fixtures.MuxReject, fixtures.MuxSupport, fixtures.MuxLose, fixtures.MuxClose),
		"fcgi-multiplex", "FastCGI second request on a busy connection: reject (CANT_MPX_CONN), support, lose (ignore it) or close")
	fs.Var(cli.NewChoice(&b.GetValues, fixtures.ReplyAnswer, fixtures.ReplyAnswer, fixtures.ReplyIgnore, fixtures.ReplyClose, fixtures.ReplyMpxsOnly, fixtures.ReplyDie),
		"fcgi-get-values", "FastCGI FCGI_GET_VALUES: answer, ignore (connection left open), close, mpxs-only (php-fpm's answer) or die (any name asked takes the server down: Ruby's fcgi.rb)")
	fs.Var(cli.NewChoice(&b.UnknownType, fixtures.ReplyAnswer, fixtures.ReplyAnswer, fixtures.ReplyIgnore, fixtures.ReplyClose),
		"fcgi-unknown-type", "FastCGI unknown management record: answer (UNKNOWN_TYPE), ignore or close")
	fs.Var(cli.NewChoice(&b.UnknownRole, fixtures.ReplyAnswer, fixtures.ReplyAnswer, fixtures.ReplyClose),
		"fcgi-unknown-role", "FastCGI role other than RESPONDER: answer (END_REQUEST UNKNOWN_ROLE) or close")
	fs.Var(cli.NewSeconds(&b.IdleTimeout, 0), "idle-timeout", "close connections idle this long between requests (HTTP default 5 s; FastCGI: never)")
	fs.Var(cli.NewChoice(&b.HTTP10KeepAlive, fixtures.HTTP10Announce, fixtures.HTTP10Announce, fixtures.HTTP10Silent, fixtures.HTTP10Ignore),
		"http10-keep-alive", "HTTP/1.0 Connection: keep-alive: announce (kept, with Keep-Alive), silent (kept without saying so) or ignore (close)")
	fs.BoolVar(&b.NoPipelining, "no-pipelining", false, "HTTP: drop pipelined requests (bytes that came after a request)")
	fs.BoolVar(&b.DieOnEmptyConn, "die-on-empty-conn", false, "exit when a client closes a connection before sending a byte (Ruby's fcgi.rb)")
	fs.Int64Var(&b.ExitAfter, "exit-after", 0, "exit after answering N requests (0: never)")
	fs.Var(cli.NewSeconds(&b.CloseDelay, 0), "close-delay", "close a connection that is not kept this long after its last response (Thin's or Ruby fcgi's late close)")
	fs.BoolVar(&b.IgnoreClose, "ignore-close", false, "HTTP/1.1: keep the connection after Connection: close, without saying so (uWSGI's --http11-socket)")
}

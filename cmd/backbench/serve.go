package main

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/serve"
)

const serveUsage = `Usage: backbench serve [flags]

Runs built-in backends until SIGINT or SIGTERM, one per --listen address, and
prints one line per address: "listening PROTOCOL NETWORK ADDRESS".

Models: threaded (a goroutine per connection), serial (one connection at a
time; others wait in the backlog), prefork:N (N connections at a time),
evented (all connections accepted, one request processed at a time).

Flags:
`

func newServeFlags(o *serve.Options) *pflag.FlagSet {
	fs := newFlagSet("serve")
	fs.SortFlags = false
	fs.Var(NewChoice(&o.Protocol, "http", "fcgi", "http"), "protocol", "protocol to serve: fcgi or http")
	fs.StringArrayVar(&o.Listens, "listen", nil, "address: tcp:HOST:PORT or unix:/path.sock (repeatable)")
	fs.StringVar(&o.Model, "model", "threaded", "concurrency model: threaded, serial, prefork:N, evented")
	fs.Var(load.NewSeconds(&o.Delay, 0), "delay", "sleep per request (seconds, or a duration: 10ms)")
	fs.Var(load.NewSeconds(&o.Work, 0), "work", "CPU busy time per request (seconds, or a duration: 1ms)")
	fs.IntVar(&o.Body, "body", 0, "response body size in bytes")
	fs.IntVar(&o.Grow, "grow", 0, "leak BYTES of resident memory per request (a backend whose memory grows by a known amount)")
	fs.IntVar(&o.Status, "status", 200, "response status code")
	fs.StringVar(&o.KeepAlive, "keepalive", "on", "keep-alive policy: on (honour the client), off, max=N")
	fs.StringVar(&o.Fault, "fault", "", "misbehave: name of a fault (listed above; see the README)")
	fs.IntVar(&o.FaultEvery, "fault-every", 1, "apply the fault to every K-th request")
	fs.BoolVar(&o.TLS, "tls", false, "http: serve https with a fresh self-signed certificate (clients need --insecure)")
	fs.IntVar(&o.Backlog, "backlog", 0, "listen backlog (default: net.core.somaxconn, which also caps it)")
	fs.IntVar(&o.Processes, "processes", 1, "serve from N processes sharing the listening sockets (a prefork pool: a master and N children, each running --model)")
	fs.Int64Var(&o.Preload, "preload", 0, "with --processes: bytes of read-only data mapped and read by the master and every child (code loaded before the fork)")
	fs.BoolVar(&o.IgnoreTERM, "ignore-sigterm", false, "ignore SIGTERM (a backend that must be killed: tests of what stops it)")
	addBehaviourFlags(fs, &o.Behaviour)
	return fs
}

// serveCmd parses serve's flags and runs the backends (serve.Run); a
// child of a --processes pool is this command again, with the same
// arguments and serve.ChildEnv set, which serve.Run dispatches on.
func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o := serve.Options{Args: args}
	fs := newServeFlags(&o)
	if err := parseFlags(fs, strings.TrimSuffix(serveUsage, "Flags:\n")+fixtures.FaultHelp()+"\nFlags:\n", args, stdout); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("serve: unexpected argument %q", fs.Arg(0))
	}
	err := serve.Run(ctx, o, stdout)
	var ue *serve.UsageError
	if errors.As(err, &ue) {
		return usagef("serve: %s", ue.Msg)
	}
	return err
}

// addBehaviourFlags adds serve's flags for the protocol-level behaviours
// that probe tells apart (fixtures.Behaviour).
func addBehaviourFlags(fs *pflag.FlagSet, b *fixtures.Behaviour) {
	fs.Var(NewChoice(&b.KeepConn, fixtures.KeepConnHonour, fixtures.KeepConnHonour, fixtures.KeepConnIgnore, fixtures.KeepConnAlways),
		"fcgi-keep-conn", "FastCGI FCGI_KEEP_CONN: honour, ignore (close after every request) or always (keep even without the flag)")
	fs.Var(NewChoice(&b.Multiplex, fixtures.MuxReject, fixtures.MuxReject, fixtures.MuxSupport, fixtures.MuxLose, fixtures.MuxClose),
		"fcgi-multiplex", "FastCGI second request on a busy connection: reject (CANT_MPX_CONN), support, lose (ignore it) or close")
	fs.Var(NewChoice(&b.GetValues, fixtures.ReplyAnswer, fixtures.ReplyAnswer, fixtures.ReplyIgnore, fixtures.ReplyClose, fixtures.ReplyMpxsOnly, fixtures.ReplyDie),
		"fcgi-get-values", "FastCGI FCGI_GET_VALUES: answer, ignore (connection left open), close, mpxs-only (php-fpm's answer) or die (any name asked takes the server down: Ruby's fcgi.rb)")
	fs.Var(NewChoice(&b.UnknownType, fixtures.ReplyAnswer, fixtures.ReplyAnswer, fixtures.ReplyIgnore, fixtures.ReplyClose),
		"fcgi-unknown-type", "FastCGI unknown management record: answer (UNKNOWN_TYPE), ignore or close")
	fs.Var(NewChoice(&b.UnknownRole, fixtures.ReplyAnswer, fixtures.ReplyAnswer, fixtures.ReplyClose),
		"fcgi-unknown-role", "FastCGI role other than RESPONDER: answer (END_REQUEST UNKNOWN_ROLE) or close")
	fs.Var(load.NewSeconds(&b.IdleTimeout, 0), "idle-timeout", "close connections idle this long between requests (HTTP default 5 s; FastCGI: never)")
	fs.Var(NewChoice(&b.HTTP10KeepAlive, fixtures.HTTP10Announce, fixtures.HTTP10Announce, fixtures.HTTP10Silent, fixtures.HTTP10Ignore),
		"http10-keep-alive", "HTTP/1.0 Connection: keep-alive: announce (kept, with Keep-Alive), silent (kept without saying so) or ignore (close)")
	fs.BoolVar(&b.NoPipelining, "no-pipelining", false, "HTTP: drop pipelined requests (bytes that came after a request)")
	fs.BoolVar(&b.DieOnEmptyConn, "die-on-empty-conn", false, "exit when a client closes a connection before sending a byte (Ruby's fcgi.rb)")
	fs.BoolVar(&b.DieOnCutRequest, "die-on-cut-request", false, "FastCGI: exit when a client closes a connection after a request began and before its END_REQUEST (Ruby's fcgi.rb)")
	fs.Int64Var(&b.ExitAfter, "exit-after", 0, "exit after answering N requests (0: never)")
	fs.Var(load.NewSeconds(&b.CloseDelay, 0), "close-delay", "close a connection that is not kept this long after its last response (Thin's or Ruby fcgi's late close)")
	fs.BoolVar(&b.IgnoreClose, "ignore-close", false, "HTTP/1.1: keep the connection after Connection: close, without saying so (uWSGI's --http11-socket)")
}

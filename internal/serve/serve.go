// Package serve runs the built-in backends of `backbench serve` as a
// process: it checks the command's settings, listens on every address,
// serves each with a fixtures.Server in the chosen model, prints one
// readiness line per address ("listening PROTOCOL NETWORK ADDRESS") and
// serves until its context ends or a backend exits. With Processes > 1 it
// is the master of a prefork pool instead (pool.go): children that run the
// same command line again and serve the master's listening sockets.
//
// The fixtures package is the backends themselves, a library that tests
// of every package start in their own process; what is here belongs to the
// serve process alone (signals, descriptor limits, child processes,
// mapped memory).
package serve

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/sockets"
)

// Options are the settings of `backbench serve`, as its flags give them
// (the flag of each in its comment).
type Options struct {
	Protocol   string             // --protocol: fixtures.ProtoFCGI or fixtures.ProtoHTTP
	Listens    []string           // --listen: tcp:HOST:PORT or unix:/path.sock, one backend each
	Model      string             // --model: threaded, serial, prefork:N, evented (fixtures.ParseModel)
	Delay      time.Duration      // --delay: slept per request
	Work       time.Duration      // --work: CPU busy time per request
	Body       int                // --body: response body bytes
	Grow       int                // --grow: bytes leaked per request
	Status     int                // --status: response status code
	KeepAlive  string             // --keepalive: on, off, max=N (fixtures.ParseKeepAlive)
	Fault      string             // --fault: a fault of the protocol (fixtures.Faults)
	FaultEvery int                // --fault-every: the fault on every K-th request
	Behaviour  fixtures.Behaviour // the protocol-level behaviour switches
	TLS        bool               // --tls: https with a fresh self-signed certificate
	Backlog    int                // --backlog: listen backlog (0: the default)
	Processes  int                // --processes: a pool of N children (1: no pool)
	Preload    int64              // --preload: bytes mapped and read by the pool's every process
	IgnoreTERM bool               // --ignore-sigterm: only SIGINT or SIGKILL stop it
	// Args are the command line's arguments after "serve": a pool's
	// children run the program again with them.
	Args []string
}

// UsageError is a wrong setting, found before anything listens: a usage
// error of the command line. Msg is in the command line's words.
type UsageError struct{ Msg string }

// Error returns the message.
func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, a ...any) error { return &UsageError{fmt.Sprintf(format, a...)} }

// address is one --listen address.
type address struct{ network, address string }

// check checks o and returns the backends' options and the addresses to
// listen on; every error is a *UsageError.
func (o *Options) check() (fixtures.Options, []address, error) {
	var none fixtures.Options
	if len(o.Listens) == 0 {
		return none, nil, usagef("need at least one --listen tcp:HOST:PORT or unix:/path.sock")
	}
	model, err := fixtures.ParseModel(o.Model)
	if err != nil {
		return none, nil, usagef("%v", err)
	}
	ka, err := fixtures.ParseKeepAlive(o.KeepAlive)
	if err != nil {
		return none, nil, usagef("%v", err)
	}
	switch {
	case o.Body < 0 || o.Body > 1<<30:
		return none, nil, usagef("--body %d: want 0 to 1073741824 bytes", o.Body)
	case o.Grow < 0 || o.Grow > 1<<30:
		return none, nil, usagef("--grow %d: want 0 to 1073741824 bytes", o.Grow)
	case o.Status < 100 || o.Status > 999:
		return none, nil, usagef("--status %d: want a code from 100 to 999", o.Status)
	case o.Behaviour.ExitAfter < 0:
		return none, nil, usagef("--exit-after must be 0 or more")
	case o.FaultEvery < 1:
		return none, nil, usagef("--fault-every must be at least 1")
	}
	if err := fixtures.ValidFault(o.Protocol, o.Fault); err != nil {
		return none, nil, usagef("--fault: %v", err)
	}
	switch {
	case o.Backlog < 0 || o.Backlog > 1<<20:
		return none, nil, usagef("--backlog %d: want 1 to 1048576 (0: the default)", o.Backlog)
	case o.Processes < 1 || o.Processes > 1024:
		return none, nil, usagef("--processes %d: want 1 to 1024", o.Processes)
	case o.Preload < 0 || o.Preload > 1<<34:
		return none, nil, usagef("--preload %d: want 0 to 17179869184 bytes", o.Preload)
	case o.Preload > 0 && o.Processes < 2:
		return none, nil, usagef("--preload needs --processes 2 or more")
	case o.TLS && o.Protocol != fixtures.ProtoHTTP:
		return none, nil, usagef("--tls applies to --protocol http only")
	}
	var addrs []address
	for _, l := range o.Listens {
		network, addr, ok := strings.Cut(l, ":")
		if !ok || addr == "" || (network != "tcp" && network != "unix") {
			return none, nil, usagef("bad --listen %q: want tcp:HOST:PORT or unix:/path.sock", l)
		}
		addrs = append(addrs, address{network, addr})
	}
	return fixtures.Options{Model: model, Delay: o.Delay, Work: o.Work, BodyBytes: o.Body,
		Status: o.Status, KeepAlive: ka, Fault: o.Fault, FaultEvery: o.FaultEvery,
		Behaviour: o.Behaviour, Backlog: o.Backlog, Grow: o.Grow}, addrs, nil
}

// Run checks o, then serves until ctx ends (nil) or a backend exits (an
// error saying why), printing a readiness line per address on stdout once
// it listens. A bad setting is a *UsageError, returned before anything
// listens. In a child of a pool (ChildEnv set) it serves the sockets it
// inherited instead; with Processes > 1 it is the pool's master.
func Run(ctx context.Context, o Options, stdout io.Writer) error {
	opts, addrs, err := o.check()
	if err != nil {
		return err
	}
	if o.IgnoreTERM {
		// Only SIGINT (or SIGKILL) stops it now.
		signal.Ignore(syscall.SIGTERM)
	}
	// A backend holding many connections needs many descriptors.
	_, _ = sockets.RaiseNoFileLimit(1 << 20)
	if o.TLS {
		cfg, err := fixtures.SelfSignedTLS()
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		opts.TLS = cfg
	}
	switch {
	case os.Getenv(ChildEnv) != "":
		return runChild(ctx, &o, opts)
	case o.Processes > 1:
		return runPool(ctx, &o, addrs, stdout)
	}
	var servers []*fixtures.Server
	defer func() {
		for _, s := range servers {
			s.Close()
		}
	}()
	for _, a := range addrs {
		s, err := fixtures.Start(o.Protocol, a.network, a.address, opts)
		if err != nil {
			return err
		}
		servers = append(servers, s)
		proto := o.Protocol
		if o.TLS {
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

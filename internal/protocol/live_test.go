package protocol_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/protocol"
)

// TestAdaptersAgainstBackends: each built-in protocol, found by its
// scheme, makes clients that get an answer from the built-in backend,
// and its probe runs, on TCP and on a Unix socket.
func TestAdaptersAgainstBackends(t *testing.T) {
	for _, proto := range []string{fixtures.ProtoFCGI, fixtures.ProtoHTTP} {
		for _, network := range []string{"tcp", "unix"} {
			t.Run(proto+"/"+network, func(t *testing.T) {
				srv := fixtures.StartTB(t, proto, network, fixtures.Options{BodyBytes: 7})
				tgt := target(t, srv.URL("/x"))
				p, err := protocol.Of(tgt)
				if err != nil {
					t.Fatal(err)
				}
				opts, err := p.Options(protocol.Flags{})
				if err != nil {
					t.Fatal(err)
				}
				f, err := p.Factory(protocol.Request{Target: tgt, Method: "GET", KeepAlive: true, Timeout: 5 * time.Second}, opts)
				if err != nil {
					t.Fatal(err)
				}
				c, err := f(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				for i := range 2 {
					var r load.Result
					c.Do(&r)
					if r.Class != load.OK || r.Status != 200 || r.BodyBytes != 7 || r.Dialed != (i == 0) {
						t.Errorf("request %d: class %v status %d body %d dialed %v (%v)", i, r.Class, r.Status, r.BodyBytes, r.Dialed, r.Err)
					}
				}
				only := map[string]string{fixtures.ProtoFCGI: "keep_conn", fixtures.ProtoHTTP: "http11_persistent"}[proto]
				rep, err := p.Probe(context.Background(), protocol.ProbeRequest{Target: tgt, Options: opts, Timeout: 5 * time.Second,
					IdleMax: time.Second, MaxRequests: 5, Only: []string{only}})
				if err != nil {
					t.Fatal(err)
				}
				ran := 0
				for _, l := range rep.Lines {
					if l.Name == only && l.Verdict != "skipped" {
						ran++
					}
				}
				if ran != 1 || rep.Report == nil {
					t.Errorf("probe lines %+v", rep.Lines)
				}
			})
		}
	}
}

// TestFCGIProbeUnreachable: FastCGI's probe, which opens no connection
// before its checks, says the target cannot be reached as an
// UnreachableError.
func TestFCGIProbeUnreachable(t *testing.T) {
	p, _ := protocol.Lookup("fcgi")
	_, err := p.Probe(context.Background(), protocol.ProbeRequest{Target: target(t, "fcgi://127.0.0.1:1/"), Timeout: 5 * time.Second})
	var ue *protocol.UnreachableError
	if !errors.As(err, &ue) || ue.Error() != "cannot connect to tcp 127.0.0.1:1: connection refused" {
		t.Errorf("probe of a closed port: %v", err)
	}
}

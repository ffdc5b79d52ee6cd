package protocol_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fcgi"
	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/httpprobe"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/sockets"
)

// TestDialTimeoutClass: a dial that uses up the request's deadline is a
// Timeout for both built-in clients, not a Connect failure.
func TestDialTimeoutClass(t *testing.T) {
	for _, proto := range []string{fixtures.ProtoFCGI, fixtures.ProtoHTTP} {
		for _, network := range []string{"tcp", "unix"} {
			t.Run(proto+"/"+network, func(t *testing.T) {
				srv := fixtures.StartTB(t, proto, network, fixtures.Options{})
				tgt, err := sockets.ParseTarget(srv.URL("/"))
				if err != nil {
					t.Fatal(err)
				}
				var f load.ClientFactory
				if proto == fixtures.ProtoFCGI {
					f, err = fcgi.NewFactory(fcgi.Config{Target: tgt, Timeout: time.Nanosecond})
				} else {
					f, err = httpprobe.NewFactory(httpprobe.Config{Target: tgt, Timeout: time.Nanosecond})
				}
				if err != nil {
					t.Fatal(err)
				}
				c, err := f(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				var r load.Result
				c.Do(&r)
				if r.Class != load.Timeout || r.Err == nil || !strings.Contains(r.Err.Error(), "timeout") {
					t.Errorf("class %v err %v, want a timeout", r.Class, r.Err)
				}
			})
		}
	}
}

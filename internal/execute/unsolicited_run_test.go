package execute_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/execute"
)

// trailingJunkBytes is what the trailing-junk fault sends after each
// answer.
func trailingJunkBytes(proto string) int64 {
	if proto == fixtures.ProtoFCGI {
		return int64(fixtures.TrailingJunkFCGIBytes)
	}
	return int64(len(fixtures.TrailingJunkHTTP))
}

// TestUnsolicitedBytesBench runs against the trailing-junk fault of both
// protocols, over TCP and Unix, with and without keep-alive: every request
// completes, the record counts one connection dropped and the junk's
// bytes per response, no reconnect, and the notes name the bytes nobody
// asked for instead of blaming the server for closing the connections.
func TestUnsolicitedBytesBench(t *testing.T) {
	const n = 6
	for _, proto := range []string{fixtures.ProtoFCGI, fixtures.ProtoHTTP} {
		for _, network := range []string{"tcp", "unix"} {
			for _, ka := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/keepalive=%v", proto, network, ka), func(t *testing.T) {
					srv := fixtures.StartTB(t, proto, network, fixtures.Options{BodyBytes: 10, Fault: fixtures.FaultTrailingJunk})
					run := runBenchPlan(t, context.Background(), benchLoad{n: n, c: 1, timeout: 30, keepAlive: ka}.options(srv.URL("/")),
						execute.Options{Quiet: true, Observe: true})
					res, c := run.Summary, run.Record.Counts
					if res.Complete != n || res.Failed != 0 || c.Reconnects != 0 || res.KeepAliveRequests != 0 {
						t.Errorf("complete %d failed %d reconnects %d keep-alive %d, want %d, 0, 0, 0; %v",
							res.Complete, res.Failed, c.Reconnects, res.KeepAliveRequests, n, res.ErrorSamples)
					}
					if want := n * trailingJunkBytes(proto); c.Unsolicited != n || c.UnsolicitedBytes != want {
						t.Errorf("unsolicited %d responses, %d bytes; want %d, %d", c.Unsolicited, c.UnsolicitedBytes, n, want)
					}
					note := fmt.Sprintf("the server sent %d bytes nobody asked for", n*trailingJunkBytes(proto))
					found := false
					for _, s := range res.Notes {
						found = found || strings.Contains(s, note) && strings.Contains(s, fmt.Sprintf("after %d of the %d complete responses", n, n))
						if strings.Contains(s, "closed the connection after") || strings.Contains(s, "redialed") {
							t.Errorf("a note blames the server's close: %q", s)
						}
					}
					if !found {
						t.Errorf("no note %q in %q", note, res.Notes)
					}
				})
			}
		}
	}
}

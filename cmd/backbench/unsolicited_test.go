package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/stats"
)

// junkBytes is what the trailing-junk fault sends after each answer.
func junkBytes(proto string) int64 {
	if proto == fixtures.ProtoFCGI {
		return int64(fixtures.TrailingJunkFCGIBytes)
	}
	return int64(len(fixtures.TrailingJunkHTTP))
}

// TestUnsolicitedBytesBench runs bench against the trailing-junk fault of
// both protocols, over TCP and Unix, with and without -k: every request
// completes, the record counts one connection dropped and the junk's bytes
// per response, no reconnect, and the notes name the bytes nobody asked
// for instead of blaming the server for closing the connections.
func TestUnsolicitedBytesBench(t *testing.T) {
	const n = 6
	for _, proto := range []string{fixtures.ProtoFCGI, fixtures.ProtoHTTP} {
		for _, network := range []string{"tcp", "unix"} {
			for _, ka := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/keepalive=%v", proto, network, ka), func(t *testing.T) {
					srv := fixtures.StartTB(t, proto, network, fixtures.Options{BodyBytes: 10, Fault: fixtures.FaultTrailingJunk})
					args := []string{"bench", "-q", "--format", "json", "-n", fmt.Sprint(n), "-c", "1"}
					if ka {
						args = append(args, "-k")
					}
					code, out, errs := runMain(t, context.Background(), append(args, srv.URL("/"))...)
					if code != 0 {
						t.Fatalf("bench: exit %d: %s", code, errs)
					}
					var res struct {
						stats.Summary
						Record stats.Record `json:"record"`
					}
					if err := json.Unmarshal([]byte(out), &res); err != nil {
						t.Fatal(err)
					}
					c := res.Record.Counts
					if res.Complete != n || res.Failed != 0 || c.Reconnects != 0 || res.KeepAliveRequests != 0 {
						t.Errorf("complete %d failed %d reconnects %d keep-alive %d, want %d, 0, 0, 0; %v",
							res.Complete, res.Failed, c.Reconnects, res.KeepAliveRequests, n, res.ErrorSamples)
					}
					if want := n * junkBytes(proto); c.Unsolicited != n || c.UnsolicitedBytes != want {
						t.Errorf("unsolicited %d responses, %d bytes; want %d, %d", c.Unsolicited, c.UnsolicitedBytes, n, want)
					}
					note := fmt.Sprintf("the server sent %d bytes nobody asked for", n*junkBytes(proto))
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

// TestUnsolicitedBytesProbe probes the trailing-junk fault over TCP and
// Unix: the keep-alive, request-count and pipelining checks report the
// bytes nobody asked for (verdict unsolicited) rather than count them as
// the answer to request 2 ("honored", "supported").
func TestUnsolicitedBytesProbe(t *testing.T) {
	for _, tc := range []struct {
		proto  string
		checks []string
	}{
		{fixtures.ProtoFCGI, []string{"keep_conn", "max_requests_per_connection"}},
		{fixtures.ProtoHTTP, []string{"http11_persistent", "http10_keep_alive", "max_requests_per_connection", "pipelining"}},
	} {
		for _, network := range []string{"tcp", "unix"} {
			t.Run(tc.proto+"/"+network, func(t *testing.T) {
				srv := fixtures.StartTB(t, tc.proto, network, fixtures.Options{BodyBytes: 10, Fault: fixtures.FaultTrailingJunk})
				code, out, errs := runMain(t, context.Background(), "probe", "--format", "json", "--only", strings.Join(tc.checks, ","), srv.URL("/"))
				var rep map[string]json.RawMessage
				if err := json.Unmarshal([]byte(out), &rep); err != nil {
					t.Fatalf("probe: exit %d, %v: %s\n%s", code, err, errs, out)
				}
				for _, name := range tc.checks {
					var c struct {
						Verdict  string `json:"verdict"`
						Evidence string `json:"evidence"`
					}
					json.Unmarshal(rep[name], &c)
					if c.Verdict != "unsolicited" || !strings.Contains(c.Evidence, "bytes nobody asked for") {
						t.Errorf("%s: verdict %q (%s), want unsolicited", name, c.Verdict, c.Evidence)
					}
				}
			})
		}
	}
	// The same checks against a good backend are unaffected.
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	_, out, _ := runMain(t, context.Background(), "probe", "--format", "json", "--only", "http11_persistent,pipelining", srv.URL("/"))
	if !strings.Contains(out, `"honored"`) || !strings.Contains(out, `"supported"`) {
		t.Errorf("a good backend: %s", out)
	}
}

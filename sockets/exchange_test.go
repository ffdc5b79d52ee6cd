package sockets_test

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fcgi"
	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/httpprobe"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/recorder"
	"github.com/backbench/backbench/internal/testnet"
	"github.com/backbench/backbench/sockets"
)

// protocol is what the test needs of each protocol: a client factory for a
// URL, the end of a request as the server sees it, and a response that
// keeps the connection.
type protocol struct {
	scheme string
	end    []byte // the request is complete once this arrives
	resp   []byte
	client func(t *testing.T, url string) load.Client
}

func protocols() []protocol {
	end := fcgi.AppendRecord(nil, fcgi.TypeEndRequest, fcgi.RequestID, make([]byte, 8))
	fresp := append(fcgi.AppendRecord(nil, fcgi.TypeStdout, fcgi.RequestID, []byte("Status: 200\r\n\r\nok")), end...)
	return []protocol{
		{"fcgi", fcgi.AppendRecord(nil, fcgi.TypeStdin, fcgi.RequestID, nil), fresp, func(t *testing.T, url string) load.Client {
			f, err := fcgi.NewFactory(fcgi.Config{Target: parse(t, url), KeepAlive: true, Timeout: 2 * time.Second, DocumentRoot: "/srv"})
			return mk(t, f, err)
		}},
		{"http", []byte("\r\n\r\n"), []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"), func(t *testing.T, url string) load.Client {
			f, err := httpprobe.NewFactory(httpprobe.Config{Target: parse(t, url), KeepAlive: true, Timeout: 2 * time.Second})
			return mk(t, f, err)
		}},
	}
}

func parse(t *testing.T, url string) sockets.Target {
	t.Helper()
	tg, err := sockets.ParseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func mk(t *testing.T, f load.ClientFactory, err error) load.Client {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	c, err := f(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// rawLine returns the --raw CSV line of r.
func rawLine(t *testing.T, r *load.Result) []string {
	t.Helper()
	var b bytes.Buffer
	rec := recorder.New(recorder.Options{Raw: &b})
	rec.Shard(0).Record(r)
	rec.Merge()
	return strings.Split(strings.TrimSpace(b.String()), ",")
}

// TestRefusedDialSameForBothProtocols: a refused dial is a Connect failure
// that opened no connection, so --raw's connect_ms is 0 for both protocols.
func TestRefusedDialSameForBothProtocols(t *testing.T) {
	free := testnet.DeadTCP(t, "127.0.0.1")
	got := map[string]string{}
	for _, p := range protocols() {
		c := p.client(t, p.scheme+"://"+free+"/x")
		var r load.Result
		c.Do(&r)
		if r.Class != load.Connect || r.Dialed || load.KindOf(r.Err) != load.KindRefused {
			t.Fatalf("%s: class %v dialed %v err %v", p.scheme, r.Class, r.Dialed, r.Err)
		}
		got[p.scheme] = rawLine(t, &r)[2]
	}
	if got["fcgi"] != got["http"] || got["http"] != "0.000" {
		t.Errorf("connect_ms of a refused dial: %v, want 0.000 for both", got)
	}
}

// TestRedialSameForBothProtocols: after a kept connection found dead and
// redialed, BytesWritten and BytesRead count the request and the response
// once, for both protocols, on TCP and Unix sockets.
func TestRedialSameForBothProtocols(t *testing.T) {
	for _, p := range protocols() {
		for _, network := range []string{"tcp", "unix"} {
			t.Run(p.scheme+"/"+network, func(t *testing.T) {
				// Each connection serves one response that claims to
				// keep the connection, then the server closes it.
				srv := fixtures.StartRawTB(t, network, func(c net.Conn) {
					var b []byte
					buf := make([]byte, 4096)
					for !bytes.Contains(b, p.end) {
						n, err := c.Read(buf)
						if err != nil {
							return
						}
						b = append(b, buf[:n]...)
					}
					c.Write(p.resp)
				})
				c := p.client(t, srv.URL(p.scheme, "/x"))
				var first load.Result
				c.Do(&first)
				if first.Class != load.OK || !first.KeepAlive || first.BytesWritten == 0 {
					t.Fatalf("first request: %v %v keep %v written %d", first.Class, first.Err, first.KeepAlive, first.BytesWritten)
				}
				time.Sleep(50 * time.Millisecond) // let the server's close arrive
				var r load.Result
				c.Do(&r)
				if r.Class != load.OK || r.Reconnects != 1 || !r.Dialed {
					t.Fatalf("after the close: class %v err %v reconnects %d dialed %v", r.Class, r.Err, r.Reconnects, r.Dialed)
				}
				if r.BytesWritten != first.BytesWritten || r.BytesRead != int64(len(p.resp)) {
					t.Errorf("after a redial: written %d read %d, want %d and %d (the request and response once)",
						r.BytesWritten, r.BytesRead, first.BytesWritten, len(p.resp))
				}
			})
		}
	}
}

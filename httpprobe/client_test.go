package httpprobe

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/testnet"
	"github.com/backbench/backbench/sockets"
)

var networks = []string{"tcp", "unix"}

// target parses a fixture URL.
func target(t testing.TB, url string) sockets.Target {
	t.Helper()
	tg, err := sockets.ParseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// newClient makes one client of cfg, closed at the end of the test.
func newClient(t testing.TB, ctx context.Context, cfg Config) *client {
	t.Helper()
	f, err := NewFactory(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := f(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*client)
}

// wireBytes sends req on a connection of its own, half-closes it and returns
// every byte the server answered until it closed: the exact response on the
// wire, measured without the client under test.
func wireBytes(t *testing.T, network, addr string, req []byte) []byte {
	t.Helper()
	c, err := net.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	c.(interface{ CloseWrite() error }).CloseWrite()
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestClientAgainstFixture(t *testing.T) {
	const body = 1500
	type tc struct {
		network   string
		keepAlive bool
		http10    bool
		path      string
	}
	var cases []tc
	for _, nw := range networks {
		for _, ka := range []bool{true, false} {
			for _, h10 := range []bool{false, true} {
				for _, p := range []string{"/", "/chunked", "/close", "/x?q=1"} {
					cases = append(cases, tc{nw, ka, h10, p})
				}
			}
		}
	}
	servers := map[string]*fixtures.Server{}
	for _, nw := range networks {
		servers[nw] = fixtures.StartTB(t, fixtures.ProtoHTTP, nw, fixtures.Options{BodyBytes: body})
	}
	for _, c := range cases {
		name := c.network + c.path
		if c.keepAlive {
			name += "/keepalive"
		}
		if c.http10 {
			name += "/http1.0"
		}
		t.Run(name, func(t *testing.T) {
			s := servers[c.network]
			cfg := Config{Target: target(t, s.URL(c.path)), KeepAlive: c.keepAlive, HTTP10: c.http10, Timeout: 5 * time.Second}
			req, err := BuildRequest(cfg)
			if err != nil {
				t.Fatal(err)
			}
			wire := wireBytes(t, s.Network, s.Addr, req)
			// The connection is kept only when asked for and when the
			// body is not delimited by the close.
			closeBody := c.path == "/close" || (c.path == "/chunked" && c.http10)
			wantKeep := c.keepAlive && !closeBody
			// wireBytes half-closes after its request, but the fixture
			// answers before it sees the EOF, so its answer is the one
			// the client gets.
			switch {
			case !wantKeep && !bytes.Contains(wire, []byte("\r\nConnection: close\r\n")):
				t.Fatalf("response to a request without keep-alive lacks Connection: close:\n%s", wire)
			case wantKeep && c.http10 && !bytes.Contains(wire, []byte("\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5, max=100\r\n")):
				t.Fatalf("HTTP/1.0 keep-alive response lacks its headers:\n%s", wire)
			}
			cl := newClient(t, context.Background(), cfg)
			var got []byte
			cl.onBody = func(b []byte) { got = append(got, b...) }
			for i := range 3 {
				var r load.Result
				got = got[:0]
				cl.Do(&r)
				if r.Class != load.OK || r.Err != nil {
					t.Fatalf("request %d: class %v, err %v", i, r.Class, r.Err)
				}
				if r.Status != 200 {
					t.Errorf("request %d: status %d", i, r.Status)
				}
				if r.BodyBytes != body || len(got) != body {
					t.Errorf("request %d: BodyBytes %d, body seen %d, want %d", i, r.BodyBytes, len(got), body)
				}
				if r.BytesRead != int64(len(wire)) {
					t.Errorf("request %d: BytesRead %d, want %d (the bytes on the wire)", i, r.BytesRead, len(wire))
				}
				if r.BytesWritten != int64(len(req)) {
					t.Errorf("request %d: BytesWritten %d, want %d", i, r.BytesWritten, len(req))
				}
				if string(r.Server) != "backbench-fixture" {
					t.Errorf("request %d: Server %q", i, r.Server)
				}
				if r.KeepAlive != wantKeep {
					t.Errorf("request %d: KeepAlive %v, want %v", i, r.KeepAlive, wantKeep)
				}
				if wantDial := i == 0 || !wantKeep; r.Dialed != wantDial {
					t.Errorf("request %d: Dialed %v, want %v", i, r.Dialed, wantDial)
				}
				if r.Reconnects != 0 {
					t.Errorf("request %d: Reconnects %d", i, r.Reconnects)
				}
				if !(r.Start <= r.Connected && r.Connected <= r.Written && r.Written <= r.FirstByte && r.FirstByte <= r.Done) {
					t.Errorf("request %d: times out of order: %+v", i, r)
				}
				if cl.Conn.Open() != wantKeep {
					t.Errorf("request %d: connection open %v after the response, want %v", i, cl.Conn.Open(), wantKeep)
				}
			}
		})
	}
}

func TestRequestHeadSent(t *testing.T) {
	for _, nw := range networks {
		s := fixtures.StartTB(t, fixtures.ProtoHTTP, nw, fixtures.Options{})
		host := "localhost"
		if nw == "tcp" {
			host = s.Addr
		}
		tests := []struct {
			name string
			cfg  Config
			want string
		}{
			{"http1.1", Config{},
				"GET /headers HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: backbench\r\nAccept: */*\r\nConnection: close\r\n\r\n"},
			{"http1.1 keep-alive", Config{KeepAlive: true},
				"GET /headers HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: backbench\r\nAccept: */*\r\n\r\n"},
			{"http1.0", Config{HTTP10: true},
				"GET /headers HTTP/1.0\r\nHost: " + host + "\r\nUser-Agent: backbench\r\nAccept: */*\r\n\r\n"},
			{"http1.0 keep-alive", Config{HTTP10: true, KeepAlive: true},
				"GET /headers HTTP/1.0\r\nHost: " + host + "\r\nUser-Agent: backbench\r\nAccept: */*\r\nConnection: keep-alive\r\n\r\n"},
			{"user headers", Config{KeepAlive: true, Headers: [][2]string{{"X-One", "1"}, {"host", "example.org"}, {"user-agent", "ab"}, {"X-Two", "a, b"}}},
				"GET /headers HTTP/1.1\r\nhost: example.org\r\nuser-agent: ab\r\nAccept: */*\r\nX-One: 1\r\nX-Two: a, b\r\n\r\n"},
			{"user connection", Config{Headers: [][2]string{{"Connection", "keep-alive"}}},
				"GET /headers HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: backbench\r\nAccept: */*\r\nConnection: keep-alive\r\n\r\n"},
			{"post body", Config{Method: "POST", Body: []byte("a=1&b=2"), ContentType: "application/x-www-form-urlencoded"},
				"POST /headers HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: backbench\r\nAccept: */*\r\nConnection: close\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\n\r\n"},
			{"put empty body", Config{Method: "PUT", Body: []byte{}},
				"PUT /headers HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: backbench\r\nAccept: */*\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 0\r\n\r\n"},
		}
		for _, tt := range tests {
			t.Run(nw+"/"+tt.name, func(t *testing.T) {
				cfg := tt.cfg
				cfg.Target = target(t, s.URL("/headers"))
				head, err := RequestHead(cfg)
				if err != nil {
					t.Fatal(err)
				}
				if head != tt.want {
					t.Errorf("RequestHead:\n%q\nwant\n%q", head, tt.want)
				}
				var verbose bytes.Buffer
				cfg.Verbose = &verbose
				cl := newClient(t, context.Background(), cfg)
				var got []byte
				cl.onBody = func(b []byte) { got = append(got, b...) }
				for i := range 2 {
					got = got[:0]
					var r load.Result
					cl.Do(&r)
					if r.Class != load.OK {
						t.Fatalf("request %d: %v %v", i, r.Class, r.Err)
					}
					if string(got) != tt.want {
						t.Errorf("request %d: server received\n%q\nwant\n%q", i, got, tt.want)
					}
					if r.BytesWritten != int64(len(tt.want)+len(cfg.Body)) {
						t.Errorf("request %d: BytesWritten %d", i, r.BytesWritten)
					}
				}
				if !strings.HasPrefix(verbose.String(), tt.want+"HTTP/1.") {
					t.Errorf("verbose output does not start with the request head then a response head:\n%s", verbose.String())
				}
			})
		}
	}
}

func TestRequestHeadErrors(t *testing.T) {
	tg := target(t, "http://127.0.0.1:8080/")
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"https", Config{Target: target(t, "https://127.0.0.1/")}, "https needs a Dialer with TLS"},
		{"fcgi", Config{Target: target(t, "fcgi://127.0.0.1/")}, "not http"},
		{"method", Config{Target: tg, Method: "GE T"}, "bad method"},
		{"header name", Config{Target: tg, Headers: [][2]string{{"X Y", "1"}}}, "bad header name"},
		{"header value", Config{Target: tg, Headers: [][2]string{{"X", "1\r\nEvil: 1"}}}, "CR, LF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewFactory(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestClientBodylessResponses(t *testing.T) {
	tests := []struct {
		name   string
		status int
		method string
	}{
		{"HEAD", 200, "HEAD"},
		{"204", 204, "GET"},
		{"304", 304, "GET"},
		{"404 with body", 404, "GET"},
	}
	for _, nw := range networks {
		for _, tt := range tests {
			t.Run(nw+"/"+tt.name, func(t *testing.T) {
				s := fixtures.StartTB(t, fixtures.ProtoHTTP, nw, fixtures.Options{Status: tt.status, BodyBytes: 100})
				cl := newClient(t, context.Background(), Config{Target: target(t, s.URL("/")), Method: tt.method, KeepAlive: true, Timeout: 5 * time.Second})
				wantBody := int64(100)
				if tt.method == "HEAD" || tt.status == 204 || tt.status == 304 {
					wantBody = 0
				}
				for i := range 3 {
					var r load.Result
					cl.Do(&r)
					if r.Class != load.OK || r.Status != tt.status || r.BodyBytes != wantBody || !r.KeepAlive {
						t.Fatalf("request %d: class %v err %v status %d body %d keep %v", i, r.Class, r.Err, r.Status, r.BodyBytes, r.KeepAlive)
					}
				}
				if s.Accepted() != 1 {
					t.Errorf("server accepted %d connections, want 1", s.Accepted())
				}
			})
		}
	}
}

func TestClientServerMaxRequests(t *testing.T) {
	for _, nw := range networks {
		t.Run(nw, func(t *testing.T) {
			s := fixtures.StartTB(t, fixtures.ProtoHTTP, nw, fixtures.Options{BodyBytes: 10, KeepAlive: fixtures.KeepAlive{Max: 3}})
			cl := newClient(t, context.Background(), Config{Target: target(t, s.URL("/")), KeepAlive: true, Timeout: 5 * time.Second})
			dials := 0
			for i := range 10 {
				var r load.Result
				cl.Do(&r)
				if r.Class != load.OK || r.BodyBytes != 10 {
					t.Fatalf("request %d: %v %v body %d", i, r.Class, r.Err, r.BodyBytes)
				}
				if want := (i+1)%3 != 0; r.KeepAlive != want {
					t.Errorf("request %d: KeepAlive %v, want %v", i, r.KeepAlive, want)
				}
				if r.Dialed {
					dials++
				}
			}
			if dials != 4 || s.Accepted() != 4 {
				t.Errorf("dialed %d times, server accepted %d; want 4 and 4", dials, s.Accepted())
			}
		})
	}
}

// fakeServer listens on network and serves every connection with handle
// in a goroutine; it stops at the end of the test.
func fakeServer(t *testing.T, network string, handle func(c net.Conn)) sockets.Target {
	t.Helper()
	return target(t, fixtures.StartRawTB(t, network, handle).URL("http", "/"))
}

// readRequest reads a request head (no body) from c.
func readRequest(c net.Conn) error {
	var b []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(b, []byte("\r\n\r\n")) {
		n, err := c.Read(buf)
		if err != nil {
			return err
		}
		b = append(b, buf[:n]...)
	}
	return nil
}

// answer returns a handler that reads one request, writes resp and closes.
func answer(resp string) func(net.Conn) {
	return func(c net.Conn) {
		if readRequest(c) == nil {
			c.Write([]byte(resp))
		}
	}
}

func TestClientFailures(t *testing.T) {
	big := "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", 1<<20) + "\r\n\r\n"
	never := func(c net.Conn) {
		readRequest(c)
		io.Copy(io.Discard, c) // until the client or the cleanup closes
	}
	tests := []struct {
		name    string
		handle  func(net.Conn)
		class   load.ErrClass
		errText string
	}{
		{"bad version", answer("HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n"), load.Protocol, "version"},
		{"garbage", answer("hello there\r\n\r\n"), load.Protocol, "status line"},
		{"bad status code", answer("HTTP/1.1 2x0 OK\r\n\r\n"), load.Protocol, "status code"},
		{"bad header line", answer("HTTP/1.1 200 OK\r\nNoColon\r\n\r\n"), load.Protocol, "header line"},
		{"bad content length", answer("HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n"), load.Protocol, "Content-Length"},
		{"conflicting content length", answer("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"), load.Protocol, "conflicting"},
		{"head over 64 KiB", answer(big), load.Protocol, "64 KiB"},
		{"101", answer("HTTP/1.1 101 Switching Protocols\r\n\r\n"), load.Protocol, "101"},
		{"body short", answer("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc"), load.Receive, "closed in the body"},
		{"head cut", answer("HTTP/1.1 200 OK\r\nContent-Len"), load.Receive, "closed in the response head"},
		{"closed at once", func(c net.Conn) { readRequest(c) }, load.Receive, "before any response byte"},
		{"chunked bad size", answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"), load.Protocol, "chunk size"},
		{"chunked no CRLF after data", answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n"), load.Protocol, "CRLF"},
		{"chunked cut", answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"), load.Receive, "chunked body"},
		{"never answers", never, load.Timeout, "timeout"},
		{"answers half a head", func(c net.Conn) {
			readRequest(c)
			c.Write([]byte("HTTP/1.1 200 OK\r\n"))
			io.Copy(io.Discard, c)
		}, load.Timeout, "timeout reading the response head"},
	}
	const timeout = 300 * time.Millisecond
	for _, nw := range networks {
		for _, tt := range tests {
			t.Run(nw+"/"+tt.name, func(t *testing.T) {
				tg := fakeServer(t, nw, tt.handle)
				cl := newClient(t, context.Background(), Config{Target: tg, KeepAlive: true, Timeout: timeout})
				var r load.Result
				t0 := time.Now()
				cl.Do(&r)
				if d := time.Since(t0); d > timeout+time.Second {
					t.Errorf("Do took %v, want at most the timeout + 1s", d)
				}
				if r.Class != tt.class {
					t.Fatalf("class %v (err %v), want %v", r.Class, r.Err, tt.class)
				}
				if r.Err == nil || !strings.Contains(r.Err.Error(), tt.errText) {
					t.Errorf("err %v, want it to contain %q", r.Err, tt.errText)
				}
				if cl.Conn.Open() || r.KeepAlive {
					t.Error("connection not closed after a failure")
				}
				if r.Done < r.Start {
					t.Errorf("Done %d before Start %d", r.Done, r.Start)
				}
			})
		}
	}
}

func TestClientConnectFailure(t *testing.T) {
	free := testnet.DeadTCP(t, "127.0.0.1")
	dir := t.TempDir()
	tests := []struct {
		name, url, want string
	}{
		{"tcp refused", "http://" + free + "/", "connect: connection refused"},
		{"unix missing", "http://unix:" + filepath.Join(dir, "none.sock") + ":/", "connect: no such Unix socket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := newClient(t, context.Background(), Config{Target: target(t, tt.url), Timeout: time.Second})
			var r load.Result
			cl.Do(&r)
			// A failed dial opened no connection: Dialed stays false, as in
			// the fcgi client (the same connect_ms, 0, in --raw).
			if r.Class != load.Connect || r.Err == nil || r.Err.Error() != tt.want || r.Dialed {
				t.Fatalf("class %v err %v dialed %v, want connect %q", r.Class, r.Err, r.Dialed, tt.want)
			}
		})
	}
}

func TestClientCancel(t *testing.T) {
	for _, nw := range networks {
		t.Run(nw, func(t *testing.T) {
			tg := fakeServer(t, nw, func(c net.Conn) {
				readRequest(c)
				io.Copy(io.Discard, c)
			})
			ctx, cancel := context.WithCancel(context.Background())
			cl := newClient(t, ctx, Config{Target: tg, KeepAlive: true, Timeout: time.Minute})
			time.AfterFunc(100*time.Millisecond, cancel)
			done := make(chan load.Result, 1)
			go func() {
				var r load.Result
				cl.Do(&r)
				done <- r
			}()
			select {
			case r := <-done:
				if r.Class == load.OK {
					t.Errorf("Do succeeded after cancel: %+v", r)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Do still blocked 5s after the context was cancelled")
			}
			// A Do after the cancellation fails at once too.
			var r load.Result
			cl.Do(&r)
			if r.Class == load.OK {
				t.Error("Do succeeded with a cancelled context")
			}
		})
	}
}

func TestClientFraming(t *testing.T) {
	tests := []struct {
		name      string
		resp      string
		keepAlive bool // the client asks for keep-alive
		body      int64
		status    int
		server    string
		kept      bool
	}{
		{"interim 100", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\nX: y\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true, 2, 200, "", true},
		{"http1.0 response closes", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", true, 2, 200, "", false},
		{"http1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nKeep-Alive: timeout=5\r\nContent-Length: 2\r\n\r\nok", true, 2, 200, "", true},
		{"http1.1 close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", true, 2, 200, "", false},
		{"http1.1 without keep-alive asked", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false, 2, 200, "", false},
		{"server token", "HTTP/1.1 200 OK\r\nserver:  Apache/2.4.62 (Debian)\r\nContent-Length: 0\r\n\r\n", true, 0, 200, "Apache/2.4.62", true},
		{"bare LF", "HTTP/1.1 200 OK\nContent-Length: 3\n\nabc", true, 3, 200, "", true},
		{"chunked with extensions and trailer", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n4;a=b;c\r\nabcd\r\nA \r\n0123456789\r\n0\r\nT: 1\r\nU: 2\r\n\r\n", true, 14, 200, "", true},
		{"transfer coding not chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 1\r\n\r\nabcdef", true, 6, 200, "", false},
		{"close delimited 1.1", "HTTP/1.1 200 OK\r\n\r\nabcdef", true, 6, 200, "", false},
		{"extra bytes after body", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA", true, 2, 200, "", false},
		{"same content length twice", "HTTP/1.1 503 Busy\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\nok", true, 2, 503, "", true},
		{"folded other header", "HTTP/1.1 200 OK\r\nX-A: 1\r\n  more\r\nContent-Length: 2\r\n\r\nok", true, 2, 200, "", true},
	}
	for _, nw := range networks {
		for _, tt := range tests {
			t.Run(nw+"/"+tt.name, func(t *testing.T) {
				tg := fakeServer(t, nw, func(c net.Conn) {
					if readRequest(c) == nil {
						c.Write([]byte(tt.resp))
						if tt.kept {
							io.Copy(io.Discard, c) // keep it open until the client closes
						}
					}
				})
				cl := newClient(t, context.Background(), Config{Target: tg, KeepAlive: tt.keepAlive, Timeout: 2 * time.Second})
				var r load.Result
				cl.Do(&r)
				if r.Class != load.OK {
					t.Fatalf("class %v err %v", r.Class, r.Err)
				}
				if r.Status != tt.status || r.BodyBytes != tt.body || string(r.Server) != tt.server || r.KeepAlive != tt.kept {
					t.Errorf("status %d body %d server %q kept %v; want %d %d %q %v",
						r.Status, r.BodyBytes, r.Server, r.KeepAlive, tt.status, tt.body, tt.server, tt.kept)
				}
				if r.BytesRead != int64(len(tt.resp)) && !strings.Contains(tt.name, "extra") {
					t.Errorf("BytesRead %d, want %d", r.BytesRead, len(tt.resp))
				}
				if cl.Conn.Open() != tt.kept {
					t.Errorf("connection open %v, want %v", cl.Conn.Open(), tt.kept)
				}
			})
		}
	}
}

func TestClientRedialsDeadKeptConnection(t *testing.T) {
	const resp = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	for _, nw := range networks {
		t.Run(nw, func(t *testing.T) {
			// Each connection serves one response that claims keep-alive,
			// then the server closes it silently.
			tg := fakeServer(t, nw, answer(resp))
			cl := newClient(t, context.Background(), Config{Target: tg, KeepAlive: true, Timeout: 2 * time.Second})
			var r load.Result
			cl.Do(&r)
			if r.Class != load.OK || !r.KeepAlive || !r.Dialed || r.Reconnects != 0 {
				t.Fatalf("first request: %+v", r)
			}
			time.Sleep(50 * time.Millisecond) // let the server's close arrive
			for i := range 3 {
				r.Reset()
				cl.Do(&r)
				if r.Class != load.OK || r.Err != nil {
					t.Fatalf("request %d after the close: class %v err %v", i, r.Class, r.Err)
				}
				if r.Reconnects != 1 || !r.Dialed || r.BytesRead != int64(len(resp)) || r.BodyBytes != 2 {
					t.Errorf("request %d: Reconnects %d Dialed %v BytesRead %d BodyBytes %d; want 1 true %d 2",
						i, r.Reconnects, r.Dialed, r.BytesRead, r.BodyBytes, len(resp))
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

func TestClientKeepAliveAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	for _, nw := range networks {
		for _, path := range []string{"/", "/chunked"} {
			t.Run(nw+path, func(t *testing.T) {
				s := fixtures.StartTB(t, fixtures.ProtoHTTP, nw, fixtures.Options{BodyBytes: 1000})
				cl := newClient(t, context.Background(), Config{Target: target(t, s.URL(path)), KeepAlive: true, Timeout: 5 * time.Second})
				var r load.Result
				cl.Do(&r) // dial outside the measure
				allocs := testing.AllocsPerRun(200, func() {
					r.Reset()
					cl.Do(&r)
					if r.Class != load.OK || !r.KeepAlive || r.Dialed {
						t.Fatalf("class %v err %v keep %v dialed %v", r.Class, r.Err, r.KeepAlive, r.Dialed)
					}
				})
				if allocs != 0 {
					t.Errorf("%v allocations per request on the keep-alive path, want 0", allocs)
				}
			})
		}
	}
}

func BenchmarkClientKeepAlive(b *testing.B) {
	for _, nw := range networks {
		b.Run(nw, func(b *testing.B) {
			s := fixtures.StartTB(b, fixtures.ProtoHTTP, nw, fixtures.Options{BodyBytes: 1000})
			cl := newClient(b, context.Background(), Config{Target: target(b, s.URL("/")), KeepAlive: true, Timeout: 5 * time.Second})
			var r load.Result
			b.ReportAllocs()
			for b.Loop() {
				r.Reset()
				cl.Do(&r)
				if r.Class != load.OK {
					b.Fatalf("class %v err %v", r.Class, r.Err)
				}
			}
		})
	}
}

// TestClientLateResponse: a response that completes after the timeout is a
// Timeout, whether the connection's deadline (which may lie a little past
// the request's) cut it off or it arrived within that slack.
func TestClientLateResponse(t *testing.T) {
	for _, nw := range []string{"tcp", "unix"} {
		t.Run(nw, func(t *testing.T) {
			t.Parallel()
			const timeout = 1600 * time.Millisecond
			s := fixtures.StartTB(t, fixtures.ProtoHTTP, nw, fixtures.Options{Delay: timeout + 40*time.Millisecond})
			c := newClient(t, context.Background(), Config{Target: target(t, s.URL("/")), KeepAlive: true, Timeout: timeout})
			var r load.Result
			c.Do(&r)
			if r.Class != load.Timeout {
				t.Fatalf("class %v (%v), want timeout", r.Class, r.Err)
			}
		})
	}
}

// TestClientMixAllocs: a mix of 1,000 requests (GET, HEAD and POST with
// a body), each serialized once and picked by load.Result.Target,
// allocates nothing per request on the keep-alive path.
func TestClientMixAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	for _, nw := range networks {
		t.Run(nw, func(t *testing.T) {
			s := fixtures.StartTB(t, fixtures.ProtoHTTP, nw, fixtures.Options{BodyBytes: 300})
			base := Config{Target: target(t, s.URL("/")), KeepAlive: true, Timeout: 5 * time.Second}
			cfg := base
			for i := range 1000 {
				m := base
				m.Target.Path = fmt.Sprintf("/p%d", i)
				switch i % 3 {
				case 1:
					m.Method = "HEAD"
				case 2:
					m.Method, m.Body = "POST", []byte("a=1")
				}
				cfg.Mix = append(cfg.Mix, m)
			}
			cl := newClient(t, context.Background(), cfg)
			var r load.Result
			cl.Do(&r)
			k := 0
			allocs := testing.AllocsPerRun(500, func() {
				r.Reset()
				r.Target = k % 1000
				k += 7
				cl.Do(&r)
				if r.Class != load.OK || !r.KeepAlive || r.Dialed {
					t.Fatalf("target %d: class %v err %v keep %v dialed %v", r.Target, r.Class, r.Err, r.KeepAlive, r.Dialed)
				}
				if want := int64(300); r.Target%3 != 1 && r.BodyBytes != want || r.Target%3 == 1 && r.BodyBytes != 0 {
					t.Fatalf("target %d: %d body bytes", r.Target, r.BodyBytes)
				}
			})
			if allocs != 0 {
				t.Errorf("%v allocations per request with 1000 targets, want 0", allocs)
			}
		})
	}
}

package fcgi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"reflect"
	"strconv"
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

// newClient builds a client from cfg for ctx (Background when nil) and closes
// it at the end of the test.
func newClient(t testing.TB, ctx context.Context, cfg Config) load.Client {
	t.Helper()
	if ctx == nil {
		ctx = context.Background()
	}
	f, err := NewFactory(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := f(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// fixtureHead is the CGI head the FastCGI fixture writes.
func fixtureHead(status int, text string, bodyLen int) string {
	return "Status: " + strconv.Itoa(status) + " " + text + "\r\nContent-Type: text/plain\r\nContent-Length: " +
		strconv.Itoa(bodyLen) + "\r\n\r\n"
}

// wireBytes is the size on the wire of a response whose STDOUT stream holds
// n bytes, framed as the fixture frames it (65528-byte records padded to 8),
// plus the empty STDOUT record and END_REQUEST.
func wireBytes(n int) int64 {
	total := 0
	for n > 0 {
		k := min(n, 65528)
		total += 8 + k + (-k & 7)
		n -= k
	}
	return int64(total + 8 + 16)
}

func TestClientFixture(t *testing.T) {
	for _, network := range networks {
		for _, keep := range []bool{true, false} {
			for _, tc := range []struct {
				status int
				text   string
				body   int
			}{{200, "OK", 0}, {200, "OK", 1234}, {404, "Not Found", 200000}} {
				name := network + "/keep=" + strconv.FormatBool(keep) + "/" + strconv.Itoa(tc.status) + "/" + strconv.Itoa(tc.body)
				t.Run(name, func(t *testing.T) {
					srv := fixtures.StartTB(t, fixtures.ProtoFCGI, network, fixtures.Options{Status: tc.status, BodyBytes: tc.body})
					cfg := Config{Target: target(t, srv.URL("/x.php")), KeepAlive: keep, Timeout: 5 * time.Second}
					c := newClient(t, nil, cfg)
					reqLen := int64(len(EncodeRequest(cfg)))
					const n = 4
					for i := 0; i < n; i++ {
						var r load.Result
						c.Do(&r)
						if r.Class != load.OK || r.Err != nil {
							t.Fatalf("request %d: %v %v", i, r.Class, r.Err)
						}
						if r.Status != tc.status {
							t.Errorf("status %d, want %d", r.Status, tc.status)
						}
						if r.BodyBytes != int64(tc.body) {
							t.Errorf("body %d bytes, want %d", r.BodyBytes, tc.body)
						}
						head := fixtureHead(tc.status, tc.text, tc.body)
						if want := wireBytes(len(head) + tc.body); r.BytesRead != want {
							t.Errorf("read %d bytes, want %d", r.BytesRead, want)
						}
						if r.BytesWritten != reqLen {
							t.Errorf("wrote %d bytes, want %d", r.BytesWritten, reqLen)
						}
						if r.KeepAlive != keep {
							t.Errorf("KeepAlive %v, want %v", r.KeepAlive, keep)
						}
						if wantDial := i == 0 || !keep; r.Dialed != wantDial {
							t.Errorf("request %d: Dialed %v, want %v", i, r.Dialed, wantDial)
						}
						if !(r.Start <= r.Connected && r.Connected <= r.Written && r.Written <= r.FirstByte && r.FirstByte <= r.Done) {
							t.Errorf("times out of order: %+v", r)
						}
						if r.Server != nil {
							t.Errorf("Server %q, want none", r.Server)
						}
					}
					wantConns := int64(n)
					if keep {
						wantConns = 1
					}
					if got := srv.Accepted(); got != wantConns {
						t.Errorf("server accepted %d connections, want %d", got, wantConns)
					}
				})
			}
		}
	}
}

// paramsOf runs one request to the fixture's /params path and returns the
// params it received as a map, and its STDIN count.
func paramsOf(t *testing.T, cfg Config) (map[string]string, string) {
	t.Helper()
	c := newClient(t, nil, cfg)
	var r load.Result
	c.Do(&r)
	if r.Class != load.OK {
		t.Fatalf("%v %v", r.Class, r.Err)
	}
	// The body is counted, not kept: fetch it again with a plain reader.
	body := rawBody(t, cfg)
	if int64(len(body)) != r.BodyBytes {
		t.Fatalf("client counted %d body bytes, the raw read %d", r.BodyBytes, len(body))
	}
	got := map[string]string{}
	stdin := ""
	for _, line := range strings.Split(strings.TrimSuffix(string(body), "\n"), "\n") {
		k, v, _ := strings.Cut(line, "=")
		if k == "STDIN" {
			stdin = v
			continue
		}
		got[k] = v
	}
	return got, stdin
}

// rawBody sends cfg's request on a fresh connection and returns the body
// after the CGI head, decoding records with the codec.
func rawBody(t *testing.T, cfg Config) []byte {
	t.Helper()
	conn, err := net.Dial(cfg.Target.Network, cfg.Target.Address)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	cfg.KeepAlive = false
	if _, err := conn.Write(EncodeRequest(cfg)); err != nil {
		t.Fatal(err)
	}
	var stdout []byte
	buf := make([]byte, MaxContent+MaxPadding)
	for {
		h, c, err := ReadRecord(conn, buf)
		if err != nil {
			t.Fatal(err)
		}
		if h.Type == TypeStdout {
			stdout = append(stdout, c...)
		}
		if h.Type == TypeEndRequest {
			break
		}
	}
	_, body, _ := FindHeaderEnd(stdout, 0)
	if body < 0 {
		t.Fatalf("no CGI head in %q", stdout)
	}
	return stdout[body:]
}

func TestClientSendsParams(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			srv := fixtures.StartTB(t, fixtures.ProtoFCGI, network, fixtures.Options{})
			root := t.TempDir()
			cfg := Config{
				Target:       target(t, srv.URL("/params?a=1&b=%20")),
				Method:       "POST",
				Headers:      [][2]string{{"X-Forwarded-For", "10.0.0.1"}, {"accept", "text/html"}, {"Content-Type", "application/json"}, {"X-Forwarded-For", "10.0.0.2"}},
				Body:         []byte("hello=world"),
				DocumentRoot: root,
				Params:       [][2]string{{"SERVER_NAME", "example.org"}, {"APP_ENV", "bench"}, {"EMPTY", ""}},
				KeepAlive:    true,
			}
			got, stdin := paramsOf(t, cfg)
			want := map[string]string{
				"REQUEST_METHOD":       "POST",
				"SCRIPT_FILENAME":      filepath.Join(root, "params"),
				"SCRIPT_NAME":          "/params",
				"DOCUMENT_URI":         "/params",
				"DOCUMENT_ROOT":        root,
				"REQUEST_URI":          "/params?a=1&b=%20",
				"QUERY_STRING":         "a=1&b=%20",
				"SERVER_PROTOCOL":      "HTTP/1.1",
				"SERVER_NAME":          "example.org",
				"GATEWAY_INTERFACE":    "CGI/1.1",
				"SERVER_SOFTWARE":      "backbench",
				"REMOTE_ADDR":          "127.0.0.1",
				"CONTENT_TYPE":         "application/json",
				"CONTENT_LENGTH":       "11",
				"HTTP_X_FORWARDED_FOR": "10.0.0.1, 10.0.0.2",
				"HTTP_ACCEPT":          "text/html",
				"APP_ENV":              "bench",
				"EMPTY":                "",
			}
			for k, v := range want {
				if g, ok := got[k]; !ok || g != v {
					t.Errorf("%s = %q (sent: %v), want %q", k, g, ok, v)
				}
			}
			if network == "tcp" {
				if got["HTTP_HOST"] != srv.Addr || got["SERVER_PORT"] == "" {
					t.Errorf("HTTP_HOST %q SERVER_PORT %q, want %q", got["HTTP_HOST"], got["SERVER_PORT"], srv.Addr)
				}
			} else if got["HTTP_HOST"] != "localhost" {
				t.Errorf("HTTP_HOST %q, want localhost", got["HTTP_HOST"])
			}
			if _, ok := got["HTTP_CONTENT_TYPE"]; ok {
				t.Error("Content-Type header also sent as HTTP_CONTENT_TYPE")
			}
			if stdin != "11" {
				t.Errorf("server received %s STDIN bytes, want 11", stdin)
			}
		})
	}
}

func TestParamsOrder(t *testing.T) {
	tg := target(t, "fcgi://127.0.0.1:9000/a%20b/index.php?x=1")
	p := Params(Config{Target: tg, DocumentRoot: "/srv/www/../www/", Headers: [][2]string{{"Host", "example.com"}, {"User-Agent", "ua"}, {"Content-Length", "5"}},
		Params: [][2]string{{"REMOTE_ADDR", "::1"}, {"HTTPS", "on"}}})
	want := [][2]string{
		{"REQUEST_METHOD", "GET"},
		{"SCRIPT_FILENAME", "/srv/www/a b/index.php"},
		{"SCRIPT_NAME", "/a b/index.php"},
		{"REQUEST_URI", "/a%20b/index.php?x=1"},
		{"DOCUMENT_URI", "/a b/index.php"},
		{"DOCUMENT_ROOT", "/srv/www"},
		{"QUERY_STRING", "x=1"},
		{"SERVER_PROTOCOL", "HTTP/1.1"},
		{"SERVER_NAME", "127.0.0.1"},
		{"SERVER_PORT", "9000"},
		{"REMOTE_ADDR", "::1"},
		{"REMOTE_PORT", "0"},
		{"GATEWAY_INTERFACE", "CGI/1.1"},
		{"SERVER_SOFTWARE", "backbench"},
		{"CONTENT_TYPE", ""},
		{"CONTENT_LENGTH", "5"},
		{"HTTP_HOST", "example.com"},
		{"HTTP_USER_AGENT", "ua"},
		{"HTTPS", "on"},
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("Params =\n%q\nwant\n%q", p, want)
	}
}

func TestEncodeRequest(t *testing.T) {
	cfg := Config{Target: target(t, "fcgi://127.0.0.1:9000/"), Body: bytes.Repeat([]byte{'b'}, 70000), KeepAlive: true}
	wire := EncodeRequest(cfg)
	r := bytes.NewReader(wire)
	buf := make([]byte, MaxContent+MaxPadding)
	var types []RecType
	var params, stdin []byte
	for r.Len() > 0 {
		h, c, err := ReadRecord(r, buf)
		if err != nil {
			t.Fatal(err)
		}
		if h.ID != RequestID {
			t.Fatalf("record id %d", h.ID)
		}
		types = append(types, h.Type)
		switch h.Type {
		case TypeBeginRequest:
			role, flags, _ := ParseBeginRequest(c)
			if role != RoleResponder || flags != FlagKeepConn {
				t.Errorf("BEGIN_REQUEST role %d flags %d", role, flags)
			}
		case TypeParams:
			params = append(params, c...)
		case TypeStdin:
			stdin = append(stdin, c...)
		}
	}
	want := []RecType{TypeBeginRequest, TypeParams, TypeParams, TypeStdin, TypeStdin, TypeStdin}
	if !reflect.DeepEqual(types, want) {
		t.Errorf("records %v, want %v", types, want)
	}
	if got, err := ParsePairs(params); err != nil || !reflect.DeepEqual(got, Params(cfg)) {
		t.Errorf("PARAMS decode to %q, %v", got, err)
	}
	if !bytes.Equal(stdin, cfg.Body) {
		t.Error("STDIN differs from the body")
	}
	cfg.KeepAlive = false
	if w := EncodeRequest(cfg); w[10] != 0 {
		t.Errorf("flags %d without keep-alive", w[10])
	}
}

func TestClientRedialsClosedKeptConnections(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			srv := fixtures.StartTB(t, fixtures.ProtoFCGI, network, fixtures.Options{BodyBytes: 10, KeepAlive: fixtures.KeepAlive{Max: 3}})
			c := newClient(t, nil, Config{Target: target(t, srv.URL("/")), KeepAlive: true, Timeout: 5 * time.Second})
			reconnects := 0
			const n = 10
			for i := 0; i < n; i++ {
				var r load.Result
				c.Do(&r)
				if r.Class != load.OK || r.BodyBytes != 10 {
					t.Fatalf("request %d: %v %v, body %d", i, r.Class, r.Err, r.BodyBytes)
				}
				reconnects += r.Reconnects
				if r.Reconnects > 0 && !r.Dialed {
					t.Errorf("request %d reconnected but Dialed is false", i)
				}
			}
			// Requests 4, 7 and 10 find their kept connection closed.
			if reconnects != 3 {
				t.Errorf("%d reconnects, want 3", reconnects)
			}
			if got := srv.Accepted(); got != 4 {
				t.Errorf("server accepted %d connections, want 4", got)
			}
			if got := srv.Requests(); got != n {
				t.Errorf("server processed %d requests, want %d", got, n)
			}
		})
	}
}

// fake starts a raw server on network whose connections are each handed to
// serve after the whole request has been read; it returns the target.
func fake(t *testing.T, network string, serve func(c net.Conn)) sockets.Target {
	t.Helper()
	srv := fixtures.StartRawTB(t, network, func(c net.Conn) {
		if readRequest(c) == nil {
			serve(c)
		}
	})
	return target(t, srv.URL("fcgi", "/index.php"))
}

// readRequest reads records up to the empty STDIN record.
func readRequest(c net.Conn) error {
	buf := make([]byte, MaxContent+MaxPadding)
	for {
		h, content, err := ReadRecord(c, buf)
		if err != nil {
			return err
		}
		if h.Type == TypeStdin && len(content) == 0 {
			return nil
		}
	}
}

func stdout(s string) []byte { return AppendRecord(nil, TypeStdout, 1, []byte(s)) }

func endRequest(ps ProtocolStatus) []byte { return AppendEndRequest(nil, 1, 0, ps) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

const okHead = "Status: 200 OK\r\nContent-Type: text/plain\r\n\r\n"

func TestClientFailureClasses(t *testing.T) {
	tinyRecords := func(s string) []byte {
		var b []byte
		for i := 0; i < len(s); i++ {
			b = AppendRecord(b, TypeStdout, 1, []byte{s[i]})
		}
		return b
	}
	bigHead := "X-Big: " + strings.Repeat("h", MaxHeaderBlock) + "\r\n\r\n"
	tests := []struct {
		name    string
		reply   []byte
		class   load.ErrClass
		errHas  string
		status  int
		body    int64
		stderr  int64
		server  string
		partial bool // the server closes without END_REQUEST
	}{
		{name: "ok", reply: cat(stdout(okHead+"hello"), stdout(""), endRequest(StatusRequestComplete)), status: 200, body: 5},
		{name: "no status is 200", reply: cat(stdout("Content-Type: text/html\n\nhi"), endRequest(0)), status: 200, body: 2},
		{name: "location is 302", reply: cat(stdout("Location: /x\r\n\r\n"), endRequest(0)), status: 302},
		{name: "status 503 and server", reply: cat(stdout("Server: nginx/1.22 (Debian)\r\nStatus: 503 Service Unavailable\r\n\r\nbusy"), endRequest(0)),
			status: 503, body: 4, server: "nginx/1.22"},
		{name: "head in one-byte records", reply: cat(tinyRecords("Status: 404 Not Found\r\nX: y\r\n\r\nbody!"), endRequest(0)), status: 404, body: 5},
		{name: "stderr is counted", reply: cat(AppendRecord(nil, TypeStderr, 1, []byte("PHP Notice: x")), stdout(okHead+"ab"),
			AppendRecord(nil, TypeStderr, 1, nil), endRequest(0)), status: 200, body: 2, stderr: 13},
		{name: "wrong request id", reply: cat(AppendRecord(nil, TypeStdout, 2, []byte(okHead)), endRequest(0)), class: load.Protocol, errHas: "request id 2"},
		{name: "management record", reply: AppendUnknownType(nil, 9), class: load.Protocol, errHas: "request id 0"},
		{name: "bad version", reply: append([]byte{2}, stdout(okHead)[1:]...), class: load.Protocol, errHas: "version 2"},
		{name: "unexpected type", reply: cat(stdout(okHead), AppendRecord(nil, TypeData, 1, []byte("x"))), class: load.Protocol, errHas: "DATA"},
		{name: "cant mpx conn", reply: endRequest(StatusCantMpxConn), class: load.Protocol, errHas: "fcgi: END_REQUEST CANT_MPX_CONN"},
		{name: "overloaded", reply: endRequest(StatusOverloaded), class: load.Protocol, errHas: "fcgi: END_REQUEST OVERLOADED"},
		{name: "unknown role", reply: endRequest(StatusUnknownRole), class: load.Protocol, errHas: "fcgi: END_REQUEST UNKNOWN_ROLE"},
		{name: "short END_REQUEST", reply: cat(stdout(okHead), AppendRecord(nil, TypeEndRequest, 1, []byte{0, 0, 0, 0})), class: load.Protocol, errHas: "END_REQUEST body"},
		{name: "no blank line", reply: cat(stdout("Status: 200 OK\r\n"), endRequest(0)), class: load.Protocol, errHas: "inside the CGI headers"},
		{name: "bad status", reply: cat(stdout("Status: OK\r\n\r\n"), endRequest(0)), class: load.Protocol, errHas: "Status"},
		{name: "line without colon", reply: cat(stdout("garbage\r\n\r\n"), endRequest(0)), class: load.Protocol, errHas: "colon"},
		{name: "head over 64 KiB", reply: cat(AppendRecord(nil, TypeStdout, 1, []byte(bigHead)), endRequest(0)), class: load.Protocol, errHas: "over"},
		{name: "closed mid-record", reply: stdout(okHead + "hello")[:20], class: load.Receive, errHas: "before END_REQUEST", partial: true},
		{name: "closed after STDOUT", reply: cat(stdout(okHead), stdout("")), class: load.Receive, errHas: "before END_REQUEST", partial: true},
		{name: "closed with nothing", reply: nil, class: load.Receive, errHas: "no response", partial: true},
	}
	for _, network := range networks {
		for _, tt := range tests {
			t.Run(network+"/"+tt.name, func(t *testing.T) {
				tg := fake(t, network, func(c net.Conn) {
					c.Write(tt.reply)
					// Leave the close to the client unless the case is a cut.
					if !tt.partial {
						io.Copy(io.Discard, c)
					}
				})
				c := newClient(t, nil, Config{Target: tg, Timeout: 5 * time.Second, KeepAlive: true})
				var r load.Result
				c.Do(&r)
				if r.Class != tt.class {
					t.Fatalf("class %v (%v), want %v", r.Class, r.Err, tt.class)
				}
				if r.BytesRead != int64(len(tt.reply)) {
					t.Errorf("read %d bytes, want %d", r.BytesRead, len(tt.reply))
				}
				if tt.class != load.OK {
					if r.Err == nil || !strings.Contains(r.Err.Error(), tt.errHas) {
						t.Errorf("err %v, want it to contain %q", r.Err, tt.errHas)
					}
					if r.KeepAlive {
						t.Error("connection kept after a failure")
					}
					if r.Done == 0 {
						t.Error("Done not set")
					}
					return
				}
				if r.Err != nil || r.Status != tt.status || r.BodyBytes != tt.body || r.StderrBytes != tt.stderr || string(r.Server) != tt.server {
					t.Errorf("got err %v status %d body %d stderr %d server %q; want status %d body %d stderr %d server %q",
						r.Err, r.Status, r.BodyBytes, r.StderrBytes, r.Server, tt.status, tt.body, tt.stderr, tt.server)
				}
			})
		}
	}
}

func TestClientTimeout(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			tg := fake(t, network, func(c net.Conn) { io.Copy(io.Discard, c) })
			const timeout = 300 * time.Millisecond
			c := newClient(t, nil, Config{Target: tg, Timeout: timeout})
			start := time.Now()
			var r load.Result
			c.Do(&r)
			if r.Class != load.Timeout {
				t.Fatalf("class %v (%v), want timeout", r.Class, r.Err)
			}
			if el := time.Since(start); el > timeout+time.Second || el < timeout {
				t.Errorf("Do returned after %v with a %v timeout", el, timeout)
			}
		})
	}
}

func TestClientConnectFailure(t *testing.T) {
	addr := testnet.DeadTCP(t, "127.0.0.1")
	tests := []struct {
		name, url, errHas string
	}{
		{"tcp refused", "fcgi://" + addr + "/", "connect: connection refused"},
		{"unix missing", "fcgi://unix:" + filepath.Join(t.TempDir(), "none.sock") + ":/", "connect: no such Unix socket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, nil, Config{Target: target(t, tt.url), Timeout: time.Second})
			var r load.Result
			c.Do(&r)
			if r.Class != load.Connect || r.Err == nil || r.Err.Error() != tt.errHas {
				t.Errorf("class %v err %v, want connect %q", r.Class, r.Err, tt.errHas)
			}
			if r.Dialed {
				t.Error("Dialed set on a failed dial")
			}
		})
	}
}

func TestClientCancel(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			tg := fake(t, network, func(c net.Conn) { io.Copy(io.Discard, c) })
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := newClient(t, ctx, Config{Target: tg, Timeout: time.Minute})
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			var r load.Result
			c.Do(&r)
			if r.Class == load.OK {
				t.Fatal("Do succeeded against a silent server")
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("Do returned %v after the cancel", el)
			}
			// A later Do fails at once.
			r.Reset()
			c.Do(&r)
			if r.Class == load.OK || r.Dialed {
				t.Errorf("Do after cancel: class %v dialed %v", r.Class, r.Dialed)
			}
		})
	}
}

func TestClientVerbose(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", fixtures.Options{Status: 201, BodyBytes: 3})
	var out bytes.Buffer
	w := &countingWriter{w: &out}
	c := newClient(t, nil, Config{Target: target(t, srv.URL("/v.php")), Verbose: w, KeepAlive: true})
	var r load.Result
	c.Do(&r)
	if r.Class != load.OK || r.Status != 201 {
		t.Fatalf("%v %v status %d", r.Class, r.Err, r.Status)
	}
	s := out.String()
	for _, want := range []string{"> BEGIN_REQUEST id=1 role=RESPONDER flags=KEEP_CONN\n", "> PARAMS SCRIPT_NAME=/v.php\n",
		"< Status: 201 Created\n< Content-Type: text/plain\n< Content-Length: 3\n<\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("verbose output lacks %q:\n%s", want, s)
		}
	}
	if w.writes != 2 {
		t.Errorf("%d writes, want 2 (request head, response head)", w.writes)
	}
}

type countingWriter struct {
	w      io.Writer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) { c.writes++; return c.w.Write(p) }

func TestNewFactoryErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no network", Config{}},
		{"bad method", Config{Target: sockets.Target{Network: "tcp"}, Method: "GE T"}},
		{"negative timeout", Config{Target: sockets.Target{Network: "tcp"}, Timeout: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewFactory(tt.cfg); err == nil || !strings.HasPrefix(err.Error(), "fcgi: ") {
				t.Errorf("err %v, want an fcgi: error", err)
			}
		})
	}
}

func TestClientNoAllocsKeepAlive(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			srv := fixtures.StartTB(t, fixtures.ProtoFCGI, network, fixtures.Options{BodyBytes: 2000})
			c := newClient(t, nil, Config{Target: target(t, srv.URL("/")), KeepAlive: true, Timeout: 5 * time.Second})
			var r load.Result
			c.Do(&r) // dial outside the measure
			failed := 0
			allocs := testing.AllocsPerRun(200, func() {
				r.Reset()
				c.Do(&r)
				if r.Class != load.OK || r.Dialed {
					failed++
				}
			})
			if failed > 0 {
				t.Fatalf("%d requests failed or redialed", failed)
			}
			if allocs != 0 {
				t.Errorf("%v allocations per request, want 0", allocs)
			}
		})
	}
}

func BenchmarkClientKeepAlive(b *testing.B) {
	for _, network := range networks {
		b.Run(network, func(b *testing.B) {
			srv := fixtures.StartTB(b, fixtures.ProtoFCGI, network, fixtures.Options{BodyBytes: 100})
			c := newClient(b, nil, Config{Target: target(b, srv.URL("/")), KeepAlive: true, Timeout: 5 * time.Second})
			var r load.Result
			b.ReportAllocs()
			for b.Loop() {
				r.Reset()
				c.Do(&r)
				if r.Class != load.OK {
					b.Fatal(r.Class, r.Err)
				}
			}
		})
	}
}

// TestClientLateResponse: a response that completes after the timeout is a
// Timeout, whether the connection's deadline (which may lie a little past
// the request's) cut it off or it arrived within that slack.
func TestClientLateResponse(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			t.Parallel()
			const timeout = 1600 * time.Millisecond
			srv := fixtures.StartTB(t, fixtures.ProtoFCGI, network, fixtures.Options{Delay: timeout + 40*time.Millisecond})
			c := newClient(t, nil, Config{Target: target(t, srv.URL("/")), KeepAlive: true, Timeout: timeout})
			var r load.Result
			c.Do(&r)
			if r.Class != load.Timeout {
				t.Fatalf("class %v (%v), want timeout", r.Class, r.Err)
			}
		})
	}
}

// TestClientNoAllocsMix: a mix of 1,000 requests, each encoded once,
// picked by load.Result.Target, allocates nothing per request either.
func TestClientNoAllocsMix(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			srv := fixtures.StartTB(t, fixtures.ProtoFCGI, network, fixtures.Options{BodyBytes: 200})
			base := Config{Target: target(t, srv.URL("/")), KeepAlive: true, Timeout: 5 * time.Second}
			cfg := base
			for i := range 1000 {
				m := base
				m.Target.Path = fmt.Sprintf("/p%d.php", i)
				if i%3 == 0 {
					m.Method, m.Body = "POST", []byte("a=1")
				}
				cfg.Mix = append(cfg.Mix, m)
			}
			c := newClient(t, nil, cfg)
			var r load.Result
			c.Do(&r)
			failed, k := 0, 0
			allocs := testing.AllocsPerRun(500, func() {
				r.Reset()
				r.Target = k % 1000
				k += 7
				c.Do(&r)
				if r.Class != load.OK || r.Dialed {
					failed++
				}
			})
			if failed > 0 {
				t.Fatalf("%d requests failed or redialed", failed)
			}
			if allocs != 0 {
				t.Errorf("%v allocations per request, want 0", allocs)
			}
		})
	}
}

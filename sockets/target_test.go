package sockets

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/testnet"
)

func TestParseTarget(t *testing.T) {
	cases := []struct {
		in                                        string
		scheme, network, address, host, port, uri string
	}{
		{"http://127.0.0.1:8080/a/b?x=1&y=2", "http", "tcp", "127.0.0.1:8080", "127.0.0.1", "8080", "/a/b?x=1&y=2"},
		{"http://localhost", "http", "tcp", "localhost:80", "localhost", "80", "/"},
		{"HTTP://localhost/", "http", "tcp", "localhost:80", "localhost", "80", "/"},
		{"fcgi://127.0.0.1/index.php", "fcgi", "tcp", "127.0.0.1:9000", "127.0.0.1", "9000", "/index.php"},
		{"fcgi://[::1]:9001/x.php?q", "fcgi", "tcp", "[::1]:9001", "::1", "9001", "/x.php?q"},
		{"http://unix:/run/app.sock:/PATH?a=b", "http", "unix", "/run/app.sock", "localhost", "", "/PATH?a=b"},
		{"fcgi://unix:/run/php/fpm.sock:/index.php", "fcgi", "unix", "/run/php/fpm.sock", "localhost", "", "/index.php"},
		{"fcgi://unix:/run/php/fpm.sock", "fcgi", "unix", "/run/php/fpm.sock", "localhost", "", "/"},
		{"fcgi://unix:/run/php/fpm.sock:", "fcgi", "unix", "/run/php/fpm.sock", "localhost", "", "/"},
		{"http://unix:./rel.sock:/", "http", "unix", "./rel.sock", "localhost", "", "/"},
		{"http://h:1/%7Euser/a%20b", "http", "tcp", "h:1", "h", "1", "/%7Euser/a%20b"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			tg, err := ParseTarget(c.in)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{tg.Scheme, tg.Network, tg.Address, tg.Host, tg.Port, tg.RequestURI()}
			want := []string{c.scheme, c.network, c.address, c.host, c.port, c.uri}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("got %q, want %q", got, want)
			}
			if tg.URL != c.in {
				t.Errorf("URL %q", tg.URL)
			}
		})
	}
}

func TestParseTargetErrors(t *testing.T) {
	cases := map[string]string{
		"":                          "want SCHEME://",
		"localhost:80":              "want SCHEME://",
		"ftp://h/":                  "unknown scheme",
		"http://":                   "missing host",
		"http://h:0/":               "bad port",
		"http://h:70000/":           "bad port",
		"http://h:x/":               "",
		"http://h:/":                "empty port",
		"http://u:p@h/":             "user info",
		"http://h/#frag":            "fragment",
		"fcgi://unix::/x":           "empty Unix socket path",
		"fcgi://unix:sock:/x":       "must be absolute",
		"fcgi://unix:/s.sock:x":     "must start with /",
		"fcgi://unix:/s.sock:/a b":  "space",
		"http://[::1/":              "",
		"http://h/\x7f":             "",
		"fcgi://unix:/s.sock:/a\nb": "control byte",
	}
	for in, want := range cases {
		_, err := ParseTarget(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseTarget(%q) = %v, want an error with %q", in, err, want)
		}
	}
}

func TestHostHeaderAndUnixOverride(t *testing.T) {
	tg, _ := ParseTarget("http://example.test:8080/x")
	if h := tg.HostHeader(); h != "example.test:8080" {
		t.Errorf("HostHeader %q", h)
	}
	u := tg.WithUnixSocket("/tmp/a.sock")
	if u.Network != "unix" || u.Address != "/tmp/a.sock" || u.HostHeader() != "example.test:8080" || u.RequestURI() != "/x" {
		t.Errorf("%+v", u)
	}
	tg, _ = ParseTarget("http://[::1]/")
	if h := tg.HostHeader(); h != "[::1]" {
		t.Errorf("HostHeader %q", h)
	}
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:8080/a?b", "fcgi://unix:/run/x.sock:/i.php?q=1", "http://[::1]:1/", "fcgi://unix:", "http://h:/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := ParseTarget(s)
		if err != nil {
			return
		}
		if !strings.HasPrefix(tg.Path, "/") || (tg.Network != "tcp" && tg.Network != "unix") || tg.Address == "" {
			t.Fatalf("ParseTarget(%q) = %+v", s, tg)
		}
		if strings.ContainsAny(tg.RequestURI(), " \r\n") {
			t.Fatalf("request URI with a space or line break: %q", tg.RequestURI())
		}
	})
}

func TestCheckAndDescribe(t *testing.T) {
	dir, _ := os.MkdirTemp("", "bb")
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	sock := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	refused := testnet.DeadTCP(t, "127.0.0.1")
	ctx := context.Background()
	cases := []struct {
		t    Target
		want string
	}{
		{Target{Network: "unix", Address: sock}, ""},
		{Target{Network: "unix", Address: filepath.Join(dir, "none")}, "no such Unix socket"},
		{Target{Network: "unix", Address: file}, "not a Unix socket: " + file + " (a regular file)"},
		{Target{Network: "unix", Address: dir}, "a directory"},
		{Target{Network: "tcp", Address: refused}, "connection refused"},
	}
	for _, c := range cases {
		err := Check(ctx, c.t, time.Second)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("Check(%s) = %v, want %q", c.t.Address, err, c.want)
		}
	}
	for err, want := range map[error]string{
		syscall.ECONNREFUSED:  "connection refused",
		syscall.EAGAIN:        "backlog full",
		syscall.EMFILE:        "too many open files",
		syscall.EADDRNOTAVAIL: "ephemeral ports exhausted",
		&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNRESET)}: "reset",
		errors.New("other"): "other",
	} {
		if got := Describe(err); !strings.Contains(got, want) {
			t.Errorf("Describe(%v) = %q, want %q", err, got, want)
		}
	}
}

// TestDialHonoursContext: a dial to a full Unix backlog or a silent address
// ends when the context does.
func TestDialHonoursContext(t *testing.T) {
	tg, _ := ParseTarget("http://127.0.0.1:1/")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if _, err := NewDialer(tg, 5*time.Second).Dial(ctx); err == nil {
		t.Fatal("dial with a cancelled context succeeded")
	}
	if time.Since(start) > 2*time.Second {
		t.Error("dial ignored the cancelled context")
	}
}

func TestRaiseNoFileLimit(t *testing.T) {
	n, err := RaiseNoFileLimit(256)
	if err != nil || n < 256 {
		t.Errorf("RaiseNoFileLimit = %d, %v", n, err)
	}
}

func TestExpandPorts(t *testing.T) {
	got, err := ExpandPorts("fcgi://127.0.0.1:{3000..3002}/app")
	if err != nil || strings.Join(got, " ") != "fcgi://127.0.0.1:3000/app fcgi://127.0.0.1:3001/app fcgi://127.0.0.1:3002/app" {
		t.Errorf("%v %v", got, err)
	}
	if got, err := ExpandPorts("http://h/"); err != nil || len(got) != 1 {
		t.Errorf("%v %v", got, err)
	}
	for _, bad := range []string{"http://h:{1..}/", "http://h:{3..1}/", "http://h:{1..2}/{3..4}", "http://h:{1..2/", "http://h:1}/", "http://h:{0..5000}/"} {
		if _, err := ExpandPorts(bad); err == nil {
			t.Errorf("ExpandPorts(%q) accepted", bad)
		}
	}
}

func TestParseAddrAndBalance(t *testing.T) {
	for in, want := range map[string]Addr{
		"tcp:127.0.0.1:3000": {"tcp", "127.0.0.1:3000"},
		"127.0.0.1:3001":     {"tcp", "127.0.0.1:3001"},
		"[::1]:80":           {"tcp", "[::1]:80"},
		"unix:/run/a.sock":   {"unix", "/run/a.sock"},
		"/run/b.sock":        {"unix", "/run/b.sock"},
	} {
		if got, err := ParseAddr(in); err != nil || got != want {
			t.Errorf("ParseAddr(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "unix:", "host", "h:0", "h:x", ":80"} {
		if _, err := ParseAddr(bad); err == nil {
			t.Errorf("ParseAddr(%q) accepted", bad)
		}
	}
	if b, err := ParseBalance("least-conn"); err != nil || b != LeastConn || b.String() != "least-conn" {
		t.Errorf("%v %v", b, err)
	}
	if _, err := ParseBalance("random"); err == nil {
		t.Error("ParseBalance accepted random")
	}
}

// TestClusterDialer spreads connections round-robin and least-conn.
func TestClusterDialer(t *testing.T) {
	var ups []Addr
	for range 3 {
		// Each connection stays open until the client closes it.
		ups = append(ups, listen(t, "tcp", func(c net.Conn) { io.Copy(io.Discard, c) }))
	}
	tg, _ := ParseTarget("http://" + ups[0].Address + "/")
	ctx := context.Background()
	d := NewClusterDialer(tg, DialerOptions{Upstreams: ups, Timeout: time.Second})
	var conns []net.Conn
	for i := range 6 {
		c, err := d.DialDeadline(ctx, time.Now().Add(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if UpstreamIndex(c) != i%3 {
			t.Errorf("round-robin dial %d went to %d", i, UpstreamIndex(c))
		}
		conns = append(conns, c)
	}
	lc := NewClusterDialer(tg, DialerOptions{Upstreams: ups, Balance: LeastConn, Timeout: time.Second})
	a, _ := lc.DialDeadline(ctx, time.Now().Add(time.Second))
	b, _ := lc.DialDeadline(ctx, time.Now().Add(time.Second))
	a.Close()
	c, _ := lc.DialDeadline(ctx, time.Now().Add(time.Second))
	if UpstreamIndex(a) == UpstreamIndex(b) || UpstreamIndex(c) == UpstreamIndex(b) {
		t.Errorf("least-conn: %d %d then %d", UpstreamIndex(a), UpstreamIndex(b), UpstreamIndex(c))
	}
	for _, c := range append(conns, b, c) {
		c.Close()
	}
}

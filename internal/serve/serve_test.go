package serve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
)

// valid are settings that Run accepts: the flags' defaults and an address.
func valid(listen ...string) Options {
	return Options{Protocol: fixtures.ProtoHTTP, Listens: listen, Model: "threaded", Status: 200,
		KeepAlive: "on", FaultEvery: 1, Processes: 1}
}

// TestCheck: every bad setting is a *UsageError in the command line's
// words; good ones give the backends' options and the addresses.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Options)
		msg  string
	}{
		{"no listen", func(o *Options) { o.Listens = nil }, "need at least one --listen"},
		{"listen without network", func(o *Options) { o.Listens = []string{"127.0.0.1:9000"} }, "bad --listen"},
		{"listen udp", func(o *Options) { o.Listens = []string{"udp:127.0.0.1:9000"} }, "bad --listen"},
		{"listen empty address", func(o *Options) { o.Listens = []string{"tcp:"} }, "bad --listen"},
		{"unknown model", func(o *Options) { o.Model = "forked" }, "unknown model"},
		{"prefork without N", func(o *Options) { o.Model = "prefork" }, "prefork:N"},
		{"bad keepalive", func(o *Options) { o.KeepAlive = "sometimes" }, "bad keep-alive policy"},
		{"negative body", func(o *Options) { o.Body = -1 }, "--body -1"},
		{"huge grow", func(o *Options) { o.Grow = 1<<30 + 1 }, "--grow 1073741825"},
		{"bad status", func(o *Options) { o.Status = 42 }, "--status 42"},
		{"negative exit-after", func(o *Options) { o.Behaviour.ExitAfter = -1 }, "--exit-after must be 0 or more"},
		{"fault every zero", func(o *Options) { o.FaultEvery = 0 }, "--fault-every must be at least 1"},
		{"unknown fault", func(o *Options) { o.Fault = "explode" }, `unknown http fault "explode"`},
		{"fault of the other protocol", func(o *Options) { o.Protocol, o.Fault = fixtures.ProtoFCGI, fixtures.FaultBadStatus }, `unknown fcgi fault`},
		{"negative backlog", func(o *Options) { o.Backlog = -1 }, "--backlog -1"},
		{"no processes", func(o *Options) { o.Processes = 0 }, "--processes 0"},
		{"too many processes", func(o *Options) { o.Processes = 1025 }, "--processes 1025"},
		{"negative preload", func(o *Options) { o.Processes, o.Preload = 2, -1 }, "--preload -1"},
		{"preload alone", func(o *Options) { o.Preload = 4096 }, "--preload needs --processes"},
		{"tls over fcgi", func(o *Options) { o.Protocol, o.TLS = fixtures.ProtoFCGI, true }, "--tls applies to --protocol http only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := valid("tcp:127.0.0.1:0")
			tc.edit(&o)
			_, _, err := o.check()
			var ue *UsageError
			if !errors.As(err, &ue) || !strings.Contains(ue.Msg, tc.msg) {
				t.Errorf("got %v, want a usage error with %q", err, tc.msg)
			}
			// Run refuses it before anything listens.
			if err := Run(context.Background(), o, io.Discard); !errors.As(err, &ue) {
				t.Errorf("Run: %v", err)
			}
		})
	}
	o := valid("tcp:127.0.0.1:0", "unix:/run/x.sock")
	o.Model, o.KeepAlive, o.Body, o.Delay = "prefork:3", "max=2", 10, time.Millisecond
	opts, addrs, err := o.check()
	if err != nil {
		t.Fatal(err)
	}
	if opts.Model.Kind != fixtures.ModelPrefork || opts.Model.N != 3 || opts.KeepAlive.Max != 2 || opts.BodyBytes != 10 || opts.Delay != time.Millisecond {
		t.Errorf("options %+v", opts)
	}
	if want := []address{{"tcp", "127.0.0.1:0"}, {"unix", "/run/x.sock"}}; fmt.Sprint(addrs) != fmt.Sprint(want) {
		t.Errorf("addresses %v, want %v", addrs, want)
	}
}

// startRun runs Run in the background and returns its first readiness
// line's fields and the channel of its result; the test's end cancels it.
func startRun(t *testing.T, o Options) ([]string, <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	returned := make(chan struct{})
	go func() {
		err := Run(ctx, o, pw)
		pw.CloseWithError(fmt.Errorf("Run returned %v", err))
		done <- err
		close(returned)
	}()
	t.Cleanup(func() {
		cancel()
		pr.Close()
		<-returned
	})
	// Every address gets its readiness line, each once it listens: the
	// first line is returned when all are read.
	timer := time.AfterFunc(10*time.Second, func() { pr.CloseWithError(errors.New("no readiness line in 10 s")) })
	r := bufio.NewReader(pr)
	var first string
	for i := range max(len(o.Listens), 1) {
		line, err := r.ReadString('\n')
		if err != nil {
			timer.Stop()
			t.Fatal(err)
		}
		if i == 0 {
			first = line
		}
	}
	timer.Stop()
	go func() { _, _ = io.Copy(io.Discard, r) }()
	return strings.Fields(first), done
}

// get asks an HTTP backend at a tcp address for / and returns the status.
func get(t *testing.T, addr string) int {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// TestRunServes: one process serves each address and says so in one line
// per address, until its context ends (no error).
func TestRunServes(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	o := valid("tcp:127.0.0.1:0", "unix:"+sock)
	o.Status = 203
	f, _ := startRun(t, o)
	if len(f) != 4 || f[0] != "listening" || f[1] != "http" || f[2] != "tcp" {
		t.Fatalf("readiness line %q", f)
	}
	if code := get(t, f[3]); code != 203 {
		t.Errorf("status %d, want 203", code)
	}
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Errorf("no socket at %s: %v", sock, err)
	}
}

// TestRunBackendExits: a backend that exits (--exit-after) ends Run with
// an error that says where and why.
func TestRunBackendExits(t *testing.T) {
	o := valid("tcp:127.0.0.1:0")
	o.Behaviour.ExitAfter = 1
	f, done := startRun(t, o)
	get(t, f[3])
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "the backend on tcp "+f[3]+" exited") {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run still serving after its backend exited")
	}
}

// TestRunListenError: an address that cannot be listened on is an error
// of its own (not a usage error), and a regular file is left alone.
func TestRunListenError(t *testing.T) {
	regular := filepath.Join(t.TempDir(), "regular")
	if err := os.WriteFile(regular, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, procs := range []int{1, 2} {
		for _, l := range []string{"unix:" + regular, "tcp:" + busy.Addr().String()} {
			o := valid(l)
			o.Processes = procs
			var out strings.Builder
			err := Run(context.Background(), o, &out)
			var ue *UsageError
			if err == nil || errors.As(err, &ue) || out.Len() > 0 {
				t.Errorf("%d processes, %s: %v (stdout %q)", procs, l, err, out.String())
			}
		}
	}
	if b, err := os.ReadFile(regular); err != nil || string(b) != "data" {
		t.Errorf("the regular file: %q, %v", b, err)
	}
}

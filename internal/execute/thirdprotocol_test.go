package execute_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/protocol"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/sockets"
)

// lineProto is a protocol made up for this test, registered by it alone:
// the request is one line "METHOD URI TAG\n", the response a line
// "STATUS LENGTH\n" and LENGTH bytes of body, one exchange per connection.
// It shows that a protocol is one Protocol value and its Register call:
// the URL parser, the executor, the record, the notes and the report take
// it without a change.
type lineProto struct{}

// lineOptions are the made-up protocol's options: a tag sent on the
// request line (--tag of a command that had it).
type lineOptions struct{ Tag string }

func init() { protocol.MustRegister(lineProto{}) }

func (lineProto) Name() string { return "line" }
func (lineProto) Schemes() []protocol.Scheme {
	return []protocol.Scheme{{Name: "line", Port: "7070"}}
}
func (lineProto) Check(f protocol.Flags) error {
	if f.HTTP10 || f.DocumentRoot != "" || len(f.Params) > 0 || f.FPMStatus != "" {
		return errors.New("the line protocol takes no --http1.0, --document-root, --param or --fpm-status")
	}
	return nil
}
func (p lineProto) Options(f protocol.Flags) (any, error) {
	if err := p.Check(f); err != nil {
		return nil, err
	}
	return lineOptions{Tag: "default"}, nil
}
func (lineProto) Factory(r protocol.Request, opts any) (load.ClientFactory, error) {
	o, _ := opts.(lineOptions)
	req := []byte(fmt.Sprintf("%s %s %s\n", r.Method, r.Target.RequestURI(), o.Tag)) // encoded once
	return func(ctx context.Context) (load.Client, error) {
		return &lineClient{ctx: ctx, t: r.Target, timeout: r.Timeout, req: req}, nil
	}, nil
}
func (lineProto) Record(r protocol.Request, _ any, rp *stats.Plan) {
	rp.Wire = &stats.Wire{Protocol: "LINE/1", KeepAlive: "one exchange per connection"}
}
func (lineProto) Notes() protocol.Notes {
	return protocol.Notes{KeepAlive: "nothing", AfterResponse: "after the body", Reconnects: "line servers do not keep connections"}
}
func (lineProto) RingByDefault(bool) bool { return false }
func (lineProto) Probe(context.Context, protocol.ProbeRequest) (*protocol.ProbeResult, error) {
	return &protocol.ProbeResult{Lines: []protocol.ProbeLine{{Name: "nothing", Verdict: "skipped"}}}, nil
}

// lineClient dials for every request.
type lineClient struct {
	ctx     context.Context
	t       sockets.Target
	timeout time.Duration
	req     []byte
	buf     []byte
}

func (c *lineClient) Do(r *load.Result) {
	r.Start = load.Now()
	fail := func(class load.ErrClass, err error) {
		r.Class, r.Err, r.Done = class, err, load.Now()
	}
	d := net.Dialer{Deadline: time.Now().Add(c.timeout)}
	conn, err := d.DialContext(c.ctx, c.t.Network, c.t.Address)
	if err != nil {
		fail(load.Connect, err)
		return
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(c.timeout))
	r.Dialed, r.Connected = true, load.Now()
	n, err := conn.Write(c.req)
	r.BytesWritten, r.Written = int64(n), load.Now()
	if err != nil {
		fail(load.Exceptions, err)
		return
	}
	br := bufio.NewReader(conn)
	head, err := br.ReadString('\n')
	if err != nil {
		fail(load.Receive, err)
		return
	}
	r.FirstByte = load.Now()
	status, length, ok := strings.Cut(strings.TrimSpace(head), " ")
	code, err1 := strconv.Atoi(status)
	size, err2 := strconv.Atoi(length)
	if !ok || err1 != nil || err2 != nil || size < 0 {
		fail(load.Protocol, fmt.Errorf("line: bad head %q", head))
		return
	}
	if cap(c.buf) < size {
		c.buf = make([]byte, size)
	}
	if _, err := io.ReadFull(br, c.buf[:size]); err != nil {
		fail(load.Receive, err)
		return
	}
	r.Status, r.BodyBytes, r.BytesRead, r.Done = code, int64(size), int64(len(head)+size), load.Now()
}

func (c *lineClient) Close() error { return nil }

// lineServer is the made-up protocol's backend on a Unix socket: it
// answers every request line with "200 5\nhello" and keeps the lines it
// was sent.
type lineServer struct {
	path  string
	n     atomic.Int64
	mu    sync.Mutex
	lines map[string]int
}

func startLineServer(t *testing.T) *lineServer {
	t.Helper()
	s := &lineServer{path: filepath.Join(t.TempDir(), "line.sock"), lines: map[string]int{}}
	ln, err := net.Listen("unix", s.path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				line, err := bufio.NewReader(c).ReadString('\n')
				if err != nil {
					return
				}
				s.n.Add(1)
				s.mu.Lock()
				s.lines[line]++
				s.mu.Unlock()
				io.WriteString(c, "200 5\nhello")
			})
		}
	})
	return s
}

// TestThirdProtocol runs a real bench of a protocol registered by this
// test alone, through the URL parser, execute.Run and the text report:
// nothing outside the registry knows of it.
func TestThirdProtocol(t *testing.T) {
	srv := startLineServer(t)
	// The URL parser takes the registered scheme, with its default port.
	if tcp, err := sockets.ParseTarget("line://127.0.0.1/x"); err != nil || tcp.Port != "7070" {
		t.Fatalf("line://127.0.0.1/x: %+v, %v", tcp, err)
	}
	tgt, err := sockets.ParseTarget("line://unix:" + srv.path + ":/hello?q=1")
	if err != nil {
		t.Fatal(err)
	}
	pr, err := protocol.Of(tgt)
	if err != nil || pr.Name() != "line" {
		t.Fatalf("lookup: %v, %v", pr, err)
	}
	if _, err := pr.Options(protocol.Flags{HTTP10: true}); err == nil || !strings.Contains(err.Error(), "takes no --http1.0") {
		t.Errorf("--http1.0 for the line protocol: %v", err)
	}
	opts, err := pr.Options(protocol.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	p := &execute.Plan{Shape: stats.Shape{Concurrency: 3, Requests: 30}, Target: tgt, Proto: pr, ProtoOptions: opts, Method: "GET", Timeout: 5 * time.Second}
	if e, err := p.ResolveEngine(); err != nil || e != execute.EnginePoller {
		t.Errorf("engine %q, %v: want the poller (the protocol does not prefer the ring)", e, err)
	}
	run, err := execute.Run(context.Background(), p, execute.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec, s := run.Record, run.Summary
	if s.Complete != 30 || s.Failed != 0 || s.Non2xx != 0 || srv.n.Load() != 30 {
		t.Fatalf("complete %d failed %d non-2xx %d, served %d: want 30, 0, 0, 30", s.Complete, s.Failed, s.Non2xx, srv.n.Load())
	}
	srv.mu.Lock()
	got := srv.lines["GET /hello?q=1 default\n"]
	srv.mu.Unlock()
	if got != 30 {
		t.Errorf("request lines %v: want 30 of the encoded request", srv.lines)
	}
	if s.Target.Protocol != "line" || s.HTMLTransferred != 150 || s.Wire == nil || s.Wire.Protocol != "LINE/1" {
		t.Errorf("summary target %+v, body bytes %d, wire %+v", s.Target, s.HTMLTransferred, s.Wire)
	}
	// The report's renderer knows no protocol: it prints the protocol's
	// words, and no FastCGI stderr line for a protocol without one.
	var b strings.Builder
	if err := report.Text(&b, &s, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Protocol:               LINE/1 GET\n", "Keep-alive:             off (one exchange per connection)\n",
		"Complete requests:      30\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "FastCGI") || strings.Contains(b.String(), "HTTP/") {
		t.Errorf("report names another protocol:\n%s", b.String())
	}
	// A plan that names only the target finds the protocol itself.
	q := &execute.Plan{Shape: stats.Shape{Concurrency: 1, Requests: 2}, Target: tgt, Method: "GET", Timeout: 5 * time.Second}
	run, err = execute.Run(context.Background(), q, execute.Options{})
	if err != nil || run.Record.Counts.Complete != 2 || rec.Plan.Wire == nil || rec.Plan.Wire.Protocol != "LINE/1" {
		t.Fatalf("plan without Proto: %v, %+v", err, run)
	}
}

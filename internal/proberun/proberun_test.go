package proberun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/protocol"
	"github.com/backbench/backbench/sockets"
)

// fake is a protocol whose probe answers from a table by address: a
// keep-alive verdict, or not reached when the address has none.
type fake struct {
	protocol.Protocol
	verdicts map[string]string
	refuse   error
}

func (f fake) Probe(_ context.Context, r protocol.ProbeRequest) (*protocol.ProbeResult, error) {
	if f.refuse != nil {
		return nil, f.refuse
	}
	v, ok := f.verdicts[r.Target.Address]
	if !ok {
		return nil, &protocol.UnreachableError{Err: errors.New("cannot connect to tcp " + r.Target.Address)}
	}
	return &protocol.ProbeResult{
		Lines:   []protocol.ProbeLine{{Name: "keep_alive", Verdict: v, Evidence: "two requests"}},
		Summary: []string{"use -k"},
		Report:  map[string]any{"keep_alive": map[string]any{"verdict": v, "evidence": "two requests", "seconds": 0.5}},
	}, nil
}

func targets(addrs ...string) []sockets.Target {
	var ts []sockets.Target
	for _, a := range addrs {
		ts = append(ts, sockets.Target{URL: "fcgi://" + a + "/", Scheme: "fcgi", Network: "tcp", Address: a})
	}
	return ts
}

func TestRun(t *testing.T) {
	p := fake{verdicts: map[string]string{"127.0.0.1:1": "honored", "127.0.0.1:2": "ignored", "127.0.0.1:3": "honored"}}
	tests := []struct {
		name    string
		addrs   []string
		json    bool
		want    []string
		wantErr bool
	}{
		{"one", []string{"127.0.0.1:1"}, false, []string{"Probing fcgi://127.0.0.1:1/ (tcp 127.0.0.1:1), each exchange within 1s",
			"keep_alive", "honored", "For benchmarking:\n  use -k\n"}, false},
		{"one json", []string{"127.0.0.1:1"}, true, []string{`"kind": "probe"`, `"keep_alive"`, `"honored"`}, false},
		{"range disagrees", []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}, false, []string{"Probing 3 addresses of URL, one after the other",
			"The addresses disagree on keep_alive: honored at tcp:127.0.0.1:1, tcp:127.0.0.1:3; ignored at tcp:127.0.0.1:2"}, false},
		{"range agrees", []string{"127.0.0.1:1", "127.0.0.1:3"}, false, []string{"The 2 addresses probed agree on every check."}, false},
		{"range one reached", []string{"127.0.0.1:1", "127.0.0.1:9"}, false, []string{"Probing fcgi://127.0.0.1:9/ (tcp 127.0.0.1:9): not reached: cannot connect",
			"1 of the 2 addresses could not be reached (see above).", "Only one address was probed: nothing to compare."}, false},
		{"range json", []string{"127.0.0.1:1", "127.0.0.1:2"}, true, []string{`"disagreements"`, `"tcp:127.0.0.1:2": "ignored"`}, false},
		{"unreachable", []string{"127.0.0.1:9"}, false, nil, true},
		{"range unreachable", []string{"127.0.0.1:8", "127.0.0.1:9"}, false, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			err := Run(context.Background(), &b, "URL", targets(tc.addrs...), Options{Protocol: p, Timeout: time.Second, JSON: tc.json})
			var ue *protocol.UnreachableError
			if tc.wantErr {
				if !errors.As(err, &ue) {
					t.Fatalf("err = %v, want an UnreachableError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.json && !json.Valid(b.Bytes()) {
				t.Fatalf("not JSON:\n%s", b.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
}

func TestProbeRefused(t *testing.T) {
	_, err := Probe(context.Background(), targets("127.0.0.1:1")[0], Options{Protocol: fake{refuse: errors.New("unknown check")}, Timeout: time.Second})
	var re *RequestError
	if !errors.As(err, &re) || re.Error() != "unknown check" {
		t.Fatalf("err = %v, want a RequestError", err)
	}
}

func TestProbeUnixSocketMissing(t *testing.T) {
	tgt := sockets.Target{URL: "fcgi://unix:/nonexistent/x.sock:/", Scheme: "fcgi", Network: "unix", Address: "/nonexistent/x.sock"}
	_, err := Probe(context.Background(), tgt, Options{Protocol: fake{}, Timeout: time.Second})
	var ue *protocol.UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "no such Unix socket") {
		t.Fatalf("err = %v, want no such Unix socket", err)
	}
}

func TestTargets(t *testing.T) {
	ts, err := Targets("fcgi://127.0.0.1:{3000..3002}/app")
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 3 || ts[0].Address != "127.0.0.1:3000" || ts[2].Address != "127.0.0.1:3002" || ts[1].Scheme != "fcgi" {
		t.Errorf("targets %+v", ts)
	}
	for _, bad := range []string{"fcgi://127.0.0.1:{3002..3000}/app", "nope://x"} {
		if _, err := Targets(bad); err == nil {
			t.Errorf("Targets(%q): want an error", bad)
		}
	}
}

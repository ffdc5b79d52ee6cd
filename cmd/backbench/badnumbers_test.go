package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
)

// TestBadNumbers runs every command with a bad number in each of its
// numeric flags (NaN, ±Inf, out of range, overflow): exit status 2, one
// line on stderr, nothing on stdout, and no connection made to the
// backend. A command that wrongly accepted its value is stopped by the
// context (so the test cannot hang) and fails the test.
func TestBadNumbers(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	url := srv.URL("/")
	sock := filepath.Join(t.TempDir(), "s.sock")
	cases := [][]string{}
	// The bad flags come after the command's others, so that they win,
	// and before its last argument (the URL), unless that is a flag.
	add := func(cmd string, tail []string, bad ...[]string) {
		for _, b := range bad {
			c := append([]string{cmd}, tail[:len(tail)-1]...)
			if last := tail[len(tail)-1]; strings.HasPrefix(last, "-") {
				c = append(append(c, last), b...)
			} else {
				c = append(append(c, b...), last)
			}
			cases = append(cases, c)
		}
	}
	add("bench", []string{"-q", "-n", "4", url},
		[]string{"-n", "-1"}, []string{"-n", "0"}, []string{"-n", "9223372036854775808"},
		[]string{"-c", "0"}, []string{"-c", "-1"}, []string{"-c", "99999999999999999999"},
		[]string{"-t", "NaN"}, []string{"-t", "nan"}, []string{"-t", "Inf"}, []string{"-t", "-Inf"}, []string{"-t", "-1"},
		[]string{"-t", "1e10"}, []string{"-t", "1e400"}, []string{"-t", "-1s"}, []string{"-t", "300000h"},
		[]string{"-s", "0"}, []string{"-s", "NaN"}, []string{"-s", "-1"}, []string{"-s", "+Inf"},
		[]string{"--rate", "NaN"}, []string{"--rate", "Inf"}, []string{"--rate", "-Inf"}, []string{"--rate", "-1"},
		[]string{"--rate", "1e308"}, []string{"--rate", "1e400"},
		[]string{"-v", "-1"}, []string{"--threads", "-1"}, []string{"--threads", "5000"},
		[]string{"--repeat", "0"}, []string{"--repeat", "-1"}, []string{"--repeat", "1000000"},
		[]string{"--precision", "NaN%"}, []string{"--precision", "Inf%"}, []string{"--precision", "-2%"},
		[]string{"--precision", "2%", "--max-repeat", "-1"}, []string{"--repeat", "2", "--noise", "NaN"},
		[]string{"--repeat", "2", "--noise", "-1%"}, []string{"--repeat", "2", "--noise", "100%"},
		[]string{"--slo", "p99<=NaNms"}, []string{"--slo", "p99<=-1ms"}, []string{"--slo", "p99<=Infs"},
		[]string{"--slo", "errors<=NaN%"}, []string{"--slo", "errors<=-1%"}, []string{"--slo", "errors<=101%"},
		[]string{"--start-at", "NaN"}, []string{"--start-at", "1e300"}, []string{"--start-at", "-Inf"},
		[]string{"--backend-pid", "-1"}, []string{"--backend-pid", "NaN"}, []string{"--backend-pid", "99999999999"},
		[]string{"--repeat", "2", "--seed", "-1"}, []string{"--repeat", "2", "--seed", "1e5"},
	)
	add("sweep", []string{"-q", "-n", "4", "--out", t.TempDir(), url},
		[]string{"-c", "NaN"}, []string{"-c", "0"}, []string{"-c", "-1:5:1"}, []string{"-c", "1:10:0"},
		[]string{"-c", "1:1e20:1"}, []string{"-c", "1,Inf"}, []string{"-c", "1:99999999999999999999:1"},
		[]string{"-c", "1", "--warmup", "-1"}, []string{"-c", "1", "--stop-error-rate", "NaN"},
		[]string{"-c", "1", "--stop-error-rate", "2"}, []string{"-c", "1", "-t", "NaN"},
		[]string{"-c", "1", "-n", "-5"}, []string{"-c", "1", "--repeat", "0"}, []string{"-c", "1", "-s", "NaN"},
	)
	add("capacity", []string{"--slo", "p99<=1s", "--out", t.TempDir(), url},
		[]string{"--start", "NaN"}, []string{"--max", "NaN"}, []string{"--start", "Inf"}, []string{"--max", "-Inf"},
		[]string{"--start", "-1"}, []string{"--max", "1e308"}, []string{"--confirm", "-1"},
		[]string{"--max-time", "NaN"}, []string{"--max-time", "-1"}, []string{"--warmup", "NaN"},
		[]string{"--resolution", "NaN"}, []string{"--resolution", "0"}, []string{"--resolution", "Inf%"},
		[]string{"-t", "0"}, []string{"-t", "NaN"}, []string{"--model", "closed", "--start", "1.5"},
		[]string{"--model", "closed", "--max", "1e300"}, []string{"-c", "0"},
	)
	add("serve", []string{"--listen=unix:" + sock},
		[]string{"--delay", "NaN"}, []string{"--delay", "-1"}, []string{"--work", "Inf"}, []string{"--body", "-1"},
		[]string{"--status", "0"}, []string{"--status", "99"}, []string{"--status", "1000"},
		[]string{"--fault", "cut", "--fault-every", "0"}, []string{"--fault", "cut", "--fault-every", "-1"},
		[]string{"--backlog", "-1"}, []string{"--processes", "0"}, []string{"--processes", "-1"},
		[]string{"--preload", "-1"}, []string{"--idle-timeout", "NaN"}, []string{"--exit-after", "-1"},
		[]string{"--keepalive", "max=NaN"}, []string{"--keepalive", "max=-1"}, []string{"--keepalive", "max=0"},
		[]string{"--model", "prefork:0"}, []string{"--model", "prefork:-1"}, []string{"--model", "prefork:NaN"},
		[]string{"--model", "prefork:99999999999999999999"},
	)
	add("probe", []string{url},
		[]string{"-s", "NaN"}, []string{"-s", "0"}, []string{"-s", "-1"}, []string{"--idle-max", "NaN"},
		[]string{"--idle-max", "-1"}, []string{"--max-requests", "0"}, []string{"--max-requests", "-1"},
	)
	add("compare", []string{"a.json"}, []string{"--noise", "NaN"}, []string{"--noise", "Inf"}, []string{"--noise", "-5%"})
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			before := srv.Accepted()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			code, out, errs := runMain(t, ctx, args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr: %s", code, exitUsage, errs)
			}
			if out != "" {
				t.Errorf("stdout: %q", out)
			}
			if strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "backbench ") {
				t.Errorf("stderr is not one line: %q", errs)
			}
			if n := srv.Accepted() - before; n != 0 {
				t.Errorf("%d connections made", n)
			}
		})
	}
}

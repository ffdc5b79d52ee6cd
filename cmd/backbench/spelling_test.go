package main

import (
	"context"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
)

// TestKeepAliveSpelling: -k, --keepalive and --keep-alive are the same bool
// in bench and sweep (sweep --keepalive -c 1,2 URL used to fail), sweep's
// choice is --keepalive-modes, and serve takes --keep-alive for its policy.
func TestKeepAliveSpelling(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{BodyBytes: 5})
	u := srv.URL("/")
	for _, tc := range []struct {
		name string
		args []string
		ka   []bool // keep-alive of each series
	}{
		{"bench -k", []string{"bench", "-k", u}, []bool{true}},
		{"bench --keepalive", []string{"bench", "--keepalive", u}, []bool{true}},
		{"bench --keep-alive", []string{"bench", "--keep-alive", u}, []bool{true}},
		{"bench none", []string{"bench", u}, []bool{false}},
		{"sweep -k", []string{"sweep", "-k", "-c", "1,2", u}, []bool{true}},
		{"sweep --keepalive", []string{"sweep", "--keepalive", "-c", "1,2", u}, []bool{true}},
		{"sweep --keep-alive", []string{"sweep", "--keep-alive", "-c", "1,2", u}, []bool{true}},
		{"sweep none", []string{"sweep", "-c", "1,2", u}, []bool{false}},
		{"sweep modes on,off", []string{"sweep", "--keepalive-modes", "on,off", "-c", "1,2", u}, []bool{true, false}},
		{"sweep modes both", []string{"sweep", "--keepalive-modes", "both", "-c", "1,2", u}, []bool{false, true}},
		{"sweep modes off", []string{"sweep", "--keep-alive-modes", "off", "-c", "1,2", u}, []bool{false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []bool
			if tc.args[0] == "bench" {
				s := benchJSON(t, append([]string{"-n", "4"}, tc.args[1:]...)...)
				got = append(got, s.KeepAlive)
			} else {
				code, _, errs, dir := sweepOut(t, append([]string{"-q", "-n", "4", "--warmup", "0"}, tc.args[1:]...)...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errs)
				}
				sw, _ := readSweep(t, dir)
				for _, se := range sw.Series {
					got = append(got, se.KeepAlive)
				}
			}
			if len(got) != len(tc.ka) {
				t.Fatalf("keep-alive per series %v, want %v", got, tc.ka)
			}
			for i := range got {
				if got[i] != tc.ka[i] {
					t.Errorf("keep-alive per series %v, want %v", got, tc.ka)
				}
			}
		})
	}
	code, _, errs := runMain(t, context.Background(), "serve", "--listen", "tcp:127.0.0.1:0", "--keep-alive", "sometimes")
	if code != exitUsage || !strings.Contains(errs, "bad keep-alive policy") {
		t.Errorf("serve --keep-alive sometimes: exit %d, %q", code, errs)
	}
}

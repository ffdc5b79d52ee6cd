package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// mixTargets is how many targets the request-mix pair's file holds.
const mixTargets = 1000

// writeMixTargets writes, in dir, a targets file of mixTargets blocks of
// paths only (GET /mix/NNNN?k=NNNN, weights 1 to 3 in turn, so that the
// schedule is not one target after another) and returns its path.
func writeMixTargets(dir string) (string, error) {
	var b strings.Builder
	for i := range mixTargets {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "GET /mix/%04d?k=%04d\n# weight: %d\n", i, i, 1+i%3)
	}
	p := filepath.Join(dir, "mix-targets.txt")
	return p, os.WriteFile(p, []byte(b.String()), 0o644)
}

// mixPair is the request mix's pair: backbench with a targets file of
// mixTargets paths (--targets) against backbench with the URL alone, the
// same load (-k, c connections, secs seconds) on the same built-in
// backend (url, its serve process pid): what picking the next of 1,000
// pre-encoded requests and recording into 1,000 histograms costs per
// request. The target: client CPU per request at most 1.05x the single
// request's. A reference line runs a targets file of one block (GET /),
// which should cost what the URL alone costs.
func mixPair(bb, dir, c, secs, url string, pid int) (pair, error) {
	file, err := writeMixTargets(dir)
	if err != nil {
		return pair{}, err
	}
	one := filepath.Join(dir, "one-target.txt")
	if err := os.WriteFile(one, []byte("GET /\n"), 0o644); err != nil {
		return pair{}, err
	}
	args := []string{bb, "bench", "-q", "-k", "-c", c, "-t", secs}
	with := func(more ...string) []string { return append(append(append([]string{}, args...), more...), url) }
	return pair{
		title:  fmt.Sprintf("request mix: %d targets vs the URL alone, built-in HTTP backend, Unix, keep-alive, c=%s", mixTargets, c),
		path:   fmt.Sprintf("request mix, %d targets vs one (built-in HTTP, Unix, keep-alive)", mixTargets),
		server: []int{pid},
		a:      tool{strconv.Itoa(mixTargets) + " targets", with("--targets", file)},
		b:      tool{"one URL", with()},
		refs:   []ref{{tool{"1-line file", with("--targets", one)}, "a targets file of one block: about 1x", false}},
		maxCPU: 1.05,
	}, nil
}

// mixOnly is the harness with -mix-only: this tree's backbench (bb, built
// in dir) against a built-in HTTP backend on a Unix socket, the request
// mix's pair alone (mixPair), then its summary row.
func mixOnly(bb, dir string) error {
	sock := filepath.Join(dir, "bb-http.sock")
	srv := exec.Command(bb, "serve", "--protocol", "http", "--body", "512", "--listen", "unix:"+sock)
	if err := srv.Start(); err != nil {
		return err
	}
	defer stopAll([]*exec.Cmd{srv})
	if err := waitListen("unix", sock); err != nil {
		return fmt.Errorf("backbench serve: %v", err)
	}
	secs := strconv.FormatFloat(runTime.Seconds(), 'f', -1, 64)
	p, err := mixPair(bb, dir, strconv.Itoa(*conns), secs, "http://unix:"+sock+":/", srv.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Printf("\n%d rounds, the order of the clients alternating; medians over the rounds\n", *rounds)
	rows, err := runPair(p)
	if err != nil {
		return err
	}
	printSummary(rows)
	return nil
}

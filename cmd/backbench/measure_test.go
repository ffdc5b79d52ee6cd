package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/summary"
)

// TestOpenModelPacingError: against a fast backend with free workers, the
// open model's corrected latencies exceed the uncorrected ones only by the
// client's own pacing error, which must stay within tens of microseconds:
// corrected minus uncorrected at most 0.05 ms at p50 and 0.3 ms at p99, at
// 1,000 requests a second.
//
// A machine shared with other work takes the CPUs from the whole process
// for tens of milliseconds at times, which no pacing can undo: an attempt
// whose scheduler probe saw the client's goroutines wait for a CPU longer
// than a bound can tell (1 ms for the p99 bound, 2 ms for the p50 one) is
// retried, and on the last attempt that bound is inconclusive (logged, not
// failed); a bound missed by an attempt that was not starved fails.
// A broken pacer (a plain timer wakes 0.5 to 1 ms late) misses the p50
// bound on any machine that lets the client run.
//
// The race detector instruments the client's own code and slows it several
// times over, and the package's other tests, run beside it, take the CPUs
// from it: the bounds are measured on a plain build with nothing else
// running, as make test runs it (apart, without -race, with
// BACKBENCH_PACING=1). Elsewhere it skips.
func TestOpenModelPacingError(t *testing.T) {
	if raceDetector || os.Getenv("BACKBENCH_PACING") != "1" {
		t.Skip("pacing accuracy is measured apart, on a plain build: BACKBENCH_PACING=1 go test -run TestOpenModelPacingError (make test does)")
	}
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	attempt := 0
	withSpeedRetries(t, func() (bad []string) {
		// A burst of other work holds the CPUs for a while; the next
		// attempt waits a little for it to pass.
		if attempt++; attempt > 1 {
			time.Sleep(2 * time.Second)
		}
		s := benchJSON(t, "--rate", "1000", "-n", "1000", "-c", "16", "-k", srv.URL("/"))
		if s.Open == nil || s.Complete != 1000 || s.Failed != 0 || s.Open.ClientLatenessMs == nil {
			t.Fatalf("complete %d failed %d open %+v", s.Complete, s.Failed, s.Open)
		}
		// A client whose goroutines waited longer than starve for a CPU
		// cannot be judged on that bound: 1 ms against the p99 bound of
		// 0.3 ms, 2 ms against the p50 bound (a median moves only when
		// the waits are many).
		for _, k := range []struct {
			rank        string
			max, starve float64
		}{{"50", 0.05, 2}, {"99", 0.3, 1}} {
			starved := s.Client.SchedulerLateMaxMs > k.starve
			d := s.Percentiles[k.rank] - s.UncorrectedPercentiles[k.rank]
			if d <= k.max {
				continue
			}
			msg := fmt.Sprintf("p%s corrected %.3f ms - uncorrected %.3f ms = %.3f ms > %.2f ms (client lateness %+v, CPU waits up to %.1f ms)",
				k.rank, s.Percentiles[k.rank], s.UncorrectedPercentiles[k.rank], d, k.max, *s.Open.ClientLatenessMs, s.Client.SchedulerLateMaxMs)
			// A client kept off the CPU for milliseconds cannot pace to
			// tens of µs: on the last attempt that is inconclusive, not a
			// failure (a broken pacer still fails on a machine that lets
			// the client run).
			if starved {
				if attempt < speedAttempts {
					bad = append(bad, msg)
				} else {
					t.Logf("inconclusive on a starved machine: %s", msg)
				}
				continue
			}
			bad = append(bad, msg)
		}
		return bad
	})
}

// TestOpenModelAccounting: a serial 10 ms backend asked for 500 requests a
// second for 1 s with -c 2 does about 100 of them; every one of the ~500
// due is complete, failed or unsent.
func TestOpenModelAccounting(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{
		Model: fixtures.Model{Kind: fixtures.ModelSerial}, Delay: 10 * time.Millisecond})
	s := benchJSON(t, "--rate", "500", "-t", "1", "-c", "2", "-k", srv.URL("/"))
	o := s.Open
	if o == nil {
		t.Fatal("no open_model")
	}
	if got := s.Complete + s.Failed - s.Failures.Length + o.UnsentRequests; got != o.DueRequests {
		t.Errorf("complete %d + failed %d + unsent %d = %d, want due %d", s.Complete, s.Failed, o.UnsentRequests, got, o.DueRequests)
	}
	// Due counts to the run's actual end, which a loaded machine can push
	// past 1 s (543 due was seen under go test -race -count=3 on a busy
	// 2-core machine): the upper bound is loose, the identity above exact.
	if o.DueRequests < 480 || o.DueRequests > 650 || s.Complete > 150 || o.UnsentRequests < 330 {
		t.Errorf("due %d, complete %d, unsent %d: want about 500, 100, 400", o.DueRequests, s.Complete, o.UnsentRequests)
	}
	// The unsent waited from their intended start to the end: the
	// corrected p99 is most of the run.
	if p := s.Percentiles["99"]; p < 500 {
		t.Errorf("corrected p99 %.1f ms: the unsent requests are missing from it", p)
	}
	code, out, errs := runMain(t, context.Background(), "bench", "-q", "--rate", "500", "-t", "0.3", "-c", "2", "-k", srv.URL("/"))
	if code != 0 || !strings.Contains(out, "Due requests:") || !strings.Contains(out, "unsent") {
		t.Errorf("exit %d, text report lacks the due line:\n%s%s", code, out, errs)
	}
}

// TestListenOverflowNote: a backend with a listen backlog of 1 and -c 60
// new connections at once overflows its accept queue; the report names its
// own listening socket, with the socket's own drop count and the backlog.
// (A threaded backend drains its queue at once, so the dropped connects
// succeed on their first SYN retransmission, after 1 s, or time out (-s 3)
// when the handshake's last ACK was dropped; a serial backend would make
// them back off for many seconds.)
func TestListenOverflowNote(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{Backlog: 1})
	var s summary.Summary
	withSpeedRetries(t, func() []string {
		s = benchJSON(t, "-n", "120", "-c", "60", "-s", "3", srv.URL("/"))
		if s.ListenOverflows == nil || s.ListenBacklog == nil || len(s.ListenQueues) != 1 || s.ListenQueues[0].Drops == nil {
			t.Fatalf("listen_overflows %v, listen_backlog %v, listen_queues %+v: not read for a loopback target",
				s.ListenOverflows, s.ListenBacklog, s.ListenQueues)
		}
		if *s.ListenBacklog != 1 || s.ListenQueues[0].Backlog != 1 || s.ListenQueues[0].Address != "tcp:"+srv.Addr {
			t.Fatalf("backlog %d, listen_queues %+v: want backlog 1 on tcp:%s", *s.ListenBacklog, s.ListenQueues, srv.Addr)
		}
		if *s.ListenQueues[0].Drops <= 0 {
			return []string{"the listen queue did not overflow"}
		}
		return nil
	})
	q := s.ListenQueues[0]
	// The machine-wide counters saw the overflow too. They are not an
	// upper or lower bound of the socket's own counter (sk_drops also
	// counts drops that neither ListenOverflows nor ListenDrops counts,
	// and other listeners add to the machine's), so only that.
	if s.ListenDrops == nil {
		t.Errorf("no machine-wide ListenDrops for a loopback target")
	} else if *s.ListenDrops <= 0 || *s.ListenOverflows <= 0 {
		t.Errorf("machine-wide ListenOverflows %d, ListenDrops %d: the socket's %d drops not seen there", *s.ListenOverflows, *s.ListenDrops, *q.Drops)
	}
	var note string
	for _, n := range s.Notes {
		if strings.Contains(n, "listen queue") {
			if note != "" {
				t.Errorf("two listen queue notes: %q and %q", note, n)
			}
			note = n
		}
	}
	for _, want := range []string{"the target's own socket tcp:" + srv.Addr, fmt.Sprintf("dropped %d connection attempts", *q.Drops),
		"backlog 1,", fmt.Sprintf("queue peaked at %d", q.PeakQueued), "somaxconn", "lower -c",
		fmt.Sprintf("%d connects took 1 s or more", s.ConnectsOver1s)} {
		if !strings.Contains(note, want) {
			t.Errorf("note lacks %q: %q", want, note)
		}
	}
	if strings.Contains(note, "machine-wide") {
		t.Errorf("the note rests on the machine-wide counters although the socket's own were read: %q", note)
	}
	// A Unix socket target: the TCP counters say nothing about it.
	usrv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	if u := benchJSON(t, "-n", "5", usrv.URL("/")); u.ListenOverflows != nil {
		t.Errorf("listen_overflows %d for a Unix socket target", *u.ListenOverflows)
	}
}

// TestBackendMemoryPSS: a pool of 3 processes sharing 64 MiB of read-only
// data (serve --processes 3 --preload) uses about a third of its summed RSS;
// bench's PSS figures agree with smaps_rollup read here.
func TestBackendMemoryPSS(t *testing.T) {
	if _, err := os.Stat("/proc/self/smaps_rollup"); err != nil {
		t.Skip("no smaps_rollup")
	}
	bin := buildBinary(t)
	srv := exec.Command(bin, "serve", "--processes", "3", "--preload", strconv.Itoa(64<<20), "--listen", "tcp:127.0.0.1:0")
	stdout, _ := srv.StdoutPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Signal(syscall.SIGTERM)
		_ = srv.Wait()
	})
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		t.Fatal("serve printed nothing")
	}
	f := strings.Fields(sc.Text())
	url := "http://" + f[len(f)-1] + "/"
	master := srv.Process.Pid
	// The children have read the preload once they serve: wait for all 3.
	if !waitFor(10*time.Second, func() bool { return len(poolPIDs(master)) == 4 }) {
		t.Fatalf("pool has %v processes, want 4", poolPIDs(master))
	}
	code, _, errs := runMain(t, context.Background(), "bench", "-q", "-n", "20", url)
	if code != 0 {
		t.Fatalf("warm-up: exit %d: %s", code, errs)
	}
	s := benchJSON(t, "-k", "-c", "3", "-n", "600", "--backend-pid", strconv.Itoa(master), url)
	var pss, rss int64
	for _, pid := range poolPIDs(master) {
		r, err := readRollupForTest(pid)
		if err != nil {
			t.Fatal(err)
		}
		pss += r[0]
		rss += r[1]
	}
	b := s.Backend
	if b == nil || b.ProcessesMax != 4 || b.PSSFallback != 0 {
		t.Fatalf("backend %+v", b)
	}
	if b.PeakPSSBytes*2 > b.PeakRSSBytes {
		t.Errorf("peak PSS %d not well below peak RSS %d for a pool sharing 64 MiB", b.PeakPSSBytes, b.PeakRSSBytes)
	}
	for _, c := range []struct {
		what      string
		got, want int64
	}{{"peak PSS", b.PeakPSSBytes, pss}, {"peak RSS", b.PeakRSSBytes, rss}} {
		if d := float64(c.got-c.want) / float64(c.want); d > 0.1 || d < -0.1 {
			t.Errorf("%s %d, smaps_rollup says %d after the run: %.0f%% apart", c.what, c.got, c.want, d*100)
		}
	}
	// The means are of samples through the run, while a child that had
	// served nothing yet may still be faulting in its pages: within the
	// peak, and the pool's sharing seen in them too.
	if b.MeanPSSBytes <= 0 || b.MeanPSSBytes > b.PeakPSSBytes || b.MeanRSSBytes <= 0 || b.MeanRSSBytes > b.PeakRSSBytes ||
		b.MeanPSSBytes*2 > b.MeanRSSBytes {
		t.Errorf("mean PSS %d, mean RSS %d: not within the peaks %d, %d, or PSS not well below RSS",
			b.MeanPSSBytes, b.MeanRSSBytes, b.PeakPSSBytes, b.PeakRSSBytes)
	}
	if b.USSMaxBytes <= 0 || b.USSMaxBytes > 32<<20 {
		t.Errorf("USS per process max %d: the shared 64 MiB is not private", b.USSMaxBytes)
	}
}

// poolPIDs returns pid and its children.
func poolPIDs(pid int) []int {
	pids := []int{pid}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		c, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			pids = append(pids, c)
		}
	}
	return pids
}

// readRollupForTest returns the Pss and Rss of smaps_rollup, in bytes.
func readRollupForTest(pid int) ([2]int64, error) {
	var out [2]int64
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return out, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "Pss:":
			out[0] = v << 10
		case "Rss:":
			out[1] = v << 10
		}
	}
	return out, nil
}

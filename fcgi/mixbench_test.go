package fcgi

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/targets"
	"github.com/backbench/backbench/sockets"
)

// mixTargets is the size of BenchmarkClientMix's mix, the bench harness's.
const mixTargets = 1000

// mixBlock is how many requests one client of BenchmarkClientMix sends
// before the other takes its turn.
const mixBlock = 256

// BenchmarkClientMix is the client's request path with one request against
// a mix of mixTargets (GET /mix/NNNN.php?k=NNNN, weights 1 to 3 in turn,
// sent in the run's schedule), each on one kept Unix connection to the
// same fixture server, taking turns in blocks of mixBlock requests so that
// both meet the same machine. Besides ns/op (wall time per request, both
// clients) and allocs/op, it reports each client's CPU time per request
// on its own thread (user and system: picking the request, the write's
// copy into the kernel, reading and parsing the response) and their
// ratio, cpu-ratio: mixTargets targets over one.
func BenchmarkClientMix(b *testing.B) {
	s := fixtures.StartTB(b, fixtures.ProtoFCGI, "unix", fixtures.Options{BodyBytes: 512})
	base := Config{Target: target(b, s.URL("/index.php")), KeepAlive: true, Timeout: 5 * time.Second}
	mix := base
	weights := make([]int, mixTargets)
	for i := range weights {
		m := base
		m.Target.Path, m.Target.RawQuery = fmt.Sprintf("/mix/%04d.php", i), fmt.Sprintf("k=%04d", i)
		mix.Mix = append(mix.Mix, m)
		weights[i] = 1 + i%3
	}
	sched, err := targets.Schedule(weights)
	if err != nil {
		b.Fatal(err)
	}
	benchMixPair(b, [2]load.Client{newClient(b, nil, base), newClient(b, nil, mix)}, sched)
}

// benchMixPair runs BenchmarkClientMix's clients: c[0] with one request,
// c[1] with a mix sent in the order of sched.
func benchMixPair(b *testing.B, c [2]load.Client, sched []int32) {
	// Locked, the goroutine's thread runs nothing else: its CPU time is
	// the client's.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var r load.Result
	k := 0
	do := func(side int) {
		r.Reset()
		if side == 1 {
			r.Target = int(sched[k])
			if k++; k == len(sched) {
				k = 0
			}
		}
		c[side].Do(&r)
		if r.Class != load.OK || !r.KeepAlive {
			b.Fatalf("client %d, target %d: class %v err %v keep %v", side, r.Target, r.Class, r.Err, r.KeepAlive)
		}
	}
	for range len(sched) { // dial, and touch every request once, outside the measure
		do(0)
		do(1)
	}
	var cpu, wall, n [2]int64
	side, sent := 0, 0
	cpu0, wall0 := sockets.ThreadCPUTime(), load.Now()
	turn := func() {
		c, w := sockets.ThreadCPUTime(), load.Now()
		cpu[side] += int64(c - cpu0)
		wall[side] += w - wall0
		n[side] += int64(sent)
		cpu0, wall0, side, sent = c, w, 1-side, 0
	}
	b.ReportAllocs()
	for b.Loop() {
		do(side)
		if sent++; sent == mixBlock {
			turn()
		}
	}
	turn()
	if n[0] == 0 || n[1] == 0 {
		return // too few requests for both
	}
	one, many := float64(cpu[0])/float64(n[0]), float64(cpu[1])/float64(n[1])
	b.ReportMetric(one, "cpu-ns/req-1")
	b.ReportMetric(many, fmt.Sprintf("cpu-ns/req-%d", mixTargets))
	b.ReportMetric(many/one, "cpu-ratio")
	b.ReportMetric(float64(wall[1])/float64(n[1])/(float64(wall[0])/float64(n[0])), "wall-ratio")
}

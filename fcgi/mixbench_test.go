package fcgi

import (
	"fmt"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/targets"
)

// mixTargets is the size of BenchmarkClientMix's mix, the bench harness's.
const mixTargets = 1000

// BenchmarkClientMix is the client's request path with one request against
// a mix of mixTargets (GET /mix/NNNN.php?k=NNNN, weights 1 to 3 in turn,
// sent in the run's schedule), each on one kept Unix connection to the
// same fixture server, taking turns in blocks of fixtures.MixBlock requests (fixtures.BenchMixPair) so that
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
	fixtures.BenchMixPair(b, [2]load.Client{newClient(b, nil, base), newClient(b, nil, mix)}, sched, mixTargets)
}

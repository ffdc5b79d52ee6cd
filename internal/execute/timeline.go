package execute

import (
	"sync"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/procstat"
	"github.com/backbench/backbench/internal/stats"
)

// series keeps what the sampling of the backend saw during a run, with the
// time of each sample, for the run's timeline (stats.BackendSample per
// window): the backend's processes (every 100 ms) and the target's
// listen queues (every 10 ms). It is bounded: past maxPoints samples,
// neighbouring ones merge in pairs (the larger memory, processes and
// queue, the later CPU counter), which keeps the peaks.
type series struct {
	mu  sync.Mutex
	pts []point
}

// maxPoints bounds a series.
const maxPoints = 4096

// point is one sample: a reading of the processes (procs >= 0) or of the
// listen queues (queued >= 0).
type point struct {
	at     int64 // load.Now ns
	cpu    float64
	pss    int64
	procs  int
	queued int
}

func (s *series) add(p point) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pts) >= maxPoints {
		n := len(s.pts) / 2
		for i := range n {
			a, b := s.pts[2*i], s.pts[2*i+1]
			a.cpu = max(a.cpu, b.cpu)
			a.pss, a.procs, a.queued = max(a.pss, b.pss), max(a.procs, b.procs), max(a.queued, b.queued)
			s.pts[i] = a
		}
		s.pts = append(s.pts[:n], s.pts[2*n:]...)
	}
	s.pts = append(s.pts, p)
}

// reading adds a sample of the processes.
func (s *series) reading(r procstat.Reading) {
	s.add(point{at: load.Now(), cpu: r.CPUSeconds, pss: r.PSS, procs: r.Procs, queued: -1})
}

// queued adds a sample of the listen queues' longest accept queue.
func (s *series) queued(n int) {
	s.add(point{at: load.Now(), cpu: -1, procs: -1, queued: n})
}

// fill puts the samples into the timeline's windows (origin: the run's
// start, load.Now ns): a window's CPU time is the rise of the counter
// over its samples (from the last sample before it), its memory,
// processes and queue the largest sampled in it. Samples past the last
// window go to the last.
func (s *series) fill(tl *stats.Timeline, origin int64) {
	if s == nil || tl == nil || tl.Width <= 0 || len(tl.Windows) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := -1.0
	for _, p := range s.pts {
		if p.at < origin {
			if p.cpu >= 0 {
				prev = p.cpu
			}
			continue
		}
		i := min(int((p.at-origin)/int64(tl.Width)), len(tl.Windows)-1)
		b := tl.Windows[i].Backend
		if b == nil {
			b = &stats.BackendSample{ListenQueued: -1}
			tl.Windows[i].Backend = b
		}
		if p.procs >= 0 {
			if prev >= 0 {
				b.CPUSeconds += max(p.cpu-prev, 0)
			}
			prev = max(prev, p.cpu)
			b.PSSBytes, b.Processes = max(b.PSSBytes, p.pss), max(b.Processes, p.procs)
		}
		if p.queued >= 0 {
			b.ListenQueued = max(b.ListenQueued, p.queued)
		}
	}
}

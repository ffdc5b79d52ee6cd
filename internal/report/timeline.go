package report

import (
	"bufio"
	"io"
	"strconv"
	"time"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/stats"
)

// TimelineCSVHeader is the header line of the timeline CSV (bench
// --timeline-csv; docs/format.md, "The timeline"). Times are in seconds
// from the run's start (start_unix: the window's start as Unix seconds),
// latencies in ms; the backend's columns are empty when it was not
// sampled in the window.
const TimelineCSVHeader = "window,start_s,end_s,start_unix,complete,failed,connect,receive,length,exceptions,timeout,protocol," +
	"requests_per_second,bytes_read,late,latency_p50_ms,latency_p99_ms,latency_max_ms,latency_mean_ms," +
	"backend_cpu_seconds,backend_pss_bytes,backend_processes,listen_queued\n"

// TimelineCSV writes a run's timeline as CSV: TimelineCSVHeader and one
// row per window (none for a record without a timeline).
func TimelineCSV(w io.Writer, tl *stats.Timeline) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(TimelineCSVHeader)
	if tl == nil || tl.Width <= 0 {
		return bw.Flush()
	}
	width := tl.Width.Seconds()
	var b []byte
	f := func(v float64, prec int) {
		b = strconv.AppendFloat(b, v, 'f', prec, 64)
		b = append(b, ',')
	}
	n := func(v int64) {
		b = strconv.AppendInt(b, v, 10)
		b = append(b, ',')
	}
	for i := range tl.Windows {
		win := &tl.Windows[i]
		b = b[:0]
		n(int64(i))
		f(float64(i)*width, 6)
		f(float64(i+1)*width, 6)
		f(float64(tl.Start.Add(tl.Width*time.Duration(i)).UnixMicro())/1e6, 6)
		n(win.Complete)
		n(win.Failed())
		for cl := load.ErrClass(1); cl < load.NumClasses; cl++ {
			n(win.Failures[cl])
		}
		f(float64(win.Complete)/width, 2)
		n(win.BytesRead)
		n(win.Late)
		for _, d := range []int64{int64(win.Latency(50)), int64(win.Latency(99)), int64(win.LatencyMax), int64(win.MeanLatency())} {
			f(float64(d)/1e6, 3)
		}
		if bs := win.Backend; bs != nil {
			if bs.Processes > 0 {
				f(bs.CPUSeconds, 3)
				n(bs.PSSBytes)
				n(int64(bs.Processes))
			} else {
				b = append(b, ",,,"...)
			}
			if bs.ListenQueued >= 0 {
				b = strconv.AppendInt(b, int64(bs.ListenQueued), 10)
			}
		} else {
			b = append(b, ",,,"...)
		}
		b = append(b, '\n')
		bw.Write(b)
	}
	return bw.Flush()
}

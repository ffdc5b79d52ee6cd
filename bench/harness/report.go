package main

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// cpuPerReq is the client's CPU microseconds (user + sys) per request.
func cpuPerReq(m measure) float64 {
	if m.requests == 0 {
		return 0
	}
	return m.cpu / float64(m.requests) * 1e6
}

// serverPerReq is the servers' CPU microseconds per request.
func serverPerReq(m measure) float64 {
	if m.requests == 0 {
		return 0
	}
	return m.server / float64(m.requests) * 1e6
}

// busy is the cores that the client and the servers kept busy together:
// near the machine's core count, the pair is bound by the machine, not by
// either program alone.
func busy(m measure) float64 {
	if m.wall == 0 {
		return 0
	}
	return (m.cpu + m.server) / m.wall
}

// median is the median of xs (the mean of the middle two for an even
// count); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// medianOf is the median over rounds of f of each measure.
func medianOf(ms []measure, f func(measure) float64) float64 {
	xs := make([]float64, len(ms))
	for i, m := range ms {
		xs[i] = f(m)
	}
	return median(xs)
}

// ratios are the medians over rounds of the per-round ratios x/y of req/s
// and of client CPU per request: each round's ratio compares two runs made
// back to back, so a machine that changes pace between rounds moves both.
func ratios(x, y []measure) (rps, cpu float64) {
	var rs, cs []float64
	for i := range min(len(x), len(y)) {
		if y[i].rps > 0 && cpuPerReq(y[i]) > 0 {
			rs = append(rs, x[i].rps/y[i].rps)
			cs = append(cs, cpuPerReq(x[i])/cpuPerReq(y[i]))
		}
	}
	return median(rs), median(cs)
}

// row is one line of the summary table.
type row struct {
	path, client, peer string
	rps, cpu           float64
	target, verdict    string
}

// judge states p's target and whether the ratios meet it, one PASS or
// MISS per part.
func judge(p pair, rps, cpu float64) (target, verdict string) {
	var t, v []string
	pf := func(ok bool) string {
		if ok {
			return "PASS"
		}
		return "MISS"
	}
	if p.need > 0 {
		t = append(t, "req/s >= "+strconv.FormatFloat(p.need, 'f', -1, 64)+"x")
		v = append(v, "req/s "+pf(rps >= p.need))
	}
	if p.maxCPU > 0 {
		t = append(t, "CPU/req <= "+strconv.FormatFloat(p.maxCPU, 'f', -1, 64)+"x")
		v = append(v, "CPU "+pf(cpu <= p.maxCPU))
	}
	if len(t) == 0 {
		return "about 1x (noise)", "-"
	}
	return strings.Join(t, ", "), strings.Join(v, ", ")
}

const lineFmt = "%-7s %-12s %10.0f %12.1f %14.1f %6.2f\n"

// runPair runs p's clients for the rounds, alternating their order, prints
// each run, the medians and the median ratios, and returns the pair's
// summary rows.
func runPair(p pair) ([]row, error) {
	// ms[0] is backbench, ms[1] the peer, ms[2:] the reference lines.
	tools := []*tool{&p.a, &p.b}
	for i := range p.refs {
		tools = append(tools, &p.refs[i].tool)
	}
	fmt.Printf("\n== %s\n%-7s %-12s %10s %12s %14s %6s\n", p.title, "round", "client", "req/s", "CPU µs/req", "server µs/req", "busy")
	ms := make([][]measure, len(tools))
	for r := range *rounds {
		order := make([]int, len(tools))
		for i := range order {
			order[i] = i
		}
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, i := range order {
			m, err := runTool(*tools[i], p.server)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %v", p.title, tools[i].name, err)
			}
			ms[i] = append(ms[i], m)
			fmt.Printf(lineFmt, strconv.Itoa(r+1), tools[i].name, m.rps, cpuPerReq(m), serverPerReq(m), busy(m))
		}
	}
	for i, t := range tools {
		fmt.Printf(lineFmt, "median", t.name, medianOf(ms[i], func(m measure) float64 { return m.rps }),
			medianOf(ms[i], cpuPerReq), medianOf(ms[i], serverPerReq), medianOf(ms[i], busy))
	}
	ratioLine := func(x, y string, rr, cr float64, tail string) {
		fmt.Printf("%-7s %-25s req/s %5.2fx   CPU/req %5.2fx   %s\n", "ratio", x+" / "+y, rr, cr, tail)
	}
	rr, cr := ratios(ms[0], ms[1])
	target, verdict := judge(p, rr, cr)
	ratioLine(p.a.name, p.b.name, rr, cr, "target: "+target+"  "+verdict)
	rows := []row{{p.path, p.a.name, p.b.name, rr, cr, target, verdict}}
	if p.need > 0 || p.maxCPU > 0 {
		// What the machine allows at backbench's own cost and the
		// servers' cost per request, if every core were busy.
		srv, cli := medianOf(ms[0], serverPerReq), medianOf(ms[0], cpuPerReq)
		fmt.Printf("%-7s %d cores / (server %.1f + backbench %.1f µs/req) = %.0f req/s at most; the peer did %.0f\n",
			"ceiling", runtime.NumCPU(), srv, cli, float64(runtime.NumCPU())/(srv+cli)*1e6, medianOf(ms[1], func(m measure) float64 { return m.rps }))
	}
	for i, rf := range p.refs {
		rr, cr := ratios(ms[0], ms[2+i])
		ratioLine(p.a.name, rf.name, rr, cr, rf.what)
		if rf.engine {
			rr, cr := ratios(ms[2+i], ms[1])
			target, verdict := judge(p, rr, cr)
			ratioLine(rf.name, p.b.name, rr, cr, "target: "+target+"  "+verdict)
			rows = append(rows, row{p.path, rf.name, p.b.name, rr, cr, target, verdict})
		}
	}
	return rows, nil
}

// printSummary prints the rows as one table: the median ratios of
// every pair against its target.
func printSummary(rows []row) {
	fmt.Printf("\nsummary (medians of %d alternating rounds; req/s above 1 and CPU below 1 favour the client)\n\n", *rounds)
	fmt.Println("| path | client | peer | req/s ratio | client CPU/request ratio | target | verdict |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Printf("| %s | %s | %s | %.2fx | %.2fx | %s | %s |\n", r.path, r.client, r.peer, r.rps, r.cpu, r.target, r.verdict)
	}
}

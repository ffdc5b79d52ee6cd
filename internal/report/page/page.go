// Package page renders saved backbench results (bench, sweep, probe,
// compare and capacity JSON, any mix) as one self-contained HTML page.
//
// It opens with the answers, before any chart: one sentence per
// comparison group (answerSentences, from rows that may name their
// factor), a capacity search's answer, a bench run's headline figures,
// each with the caveats that change its reading (a full listen queue, a
// failed share, a client short of CPU). Then, per result: what was run and
// where, the sweep charts (requests/sec, p99, failure ratio, backend CPU
// and memory) with interval bands when the results have trials, the notes
// of every series, latency percentile spectra, every figure in tables
// that fit the page (the long ones folded), comparisons grouped by pair
// with their verdicts, probe checks with their evidence and numbers,
// capacity searches (their answer, the objective's percentile against the
// offered load with the objective as a line, every step with its pass or
// FAIL).
//
// The charts are SVG drawn here, readable with JavaScript off: every data
// point carries its exact values in an SVG <title>; a level with failed
// requests or a cause the record names (a note, a full listen queue) is
// ringed and its tooltip says the cause; a y axis spanning more than 20
// times is logarithmic; sweep levels are the x ticks (on a log axis when
// they grow by a factor); series have the PNG's colours
// (report.SeriesColorHex); more than six series are small multiples; and
// a failure-ratio panel appears whenever any level failed, so that a
// series whose fast failures look like throughput is never shown alone.
// A small inline script adds legend toggling (click or Enter on a legend
// entry hides that series in every chart of its section) and hover
// highlighting. The page makes no request: inline CSS, SVG and script, no
// font or file outside it.
//
// Results are read by the result model (Parse: document.Read) and drawn
// from its types as they are (document.Sweep, the summaries of a run or
// of trials, document.Comparison, document.Probe...), never from a view
// of their own, so that files written before run records (no `schema`,
// no `environment`) and files with trials (intervals, comparisons) are
// drawn by the same code, and a key the model gains reaches the page; a
// file of a newer schema is refused.
package page

import (
	"cmp"
	"fmt"
	"html"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/trials"
)

// Options are the choices of the page.
type Options struct {
	// Title heads the page; default "backbench report".
	Title string
	// Generated is when the page was made; zero leaves it out (tests).
	Generated time.Time
	// KeepSecrets shows the recorded command lines as saved; by default
	// their credentials read load.Redacted (a file saved by an older
	// version, or with --keep-secrets, may hold them).
	KeepSecrets bool
}

// pager builds one page.
type pager struct {
	b           strings.Builder
	ids         int
	keepSecrets bool
}

// id returns a fresh element id with the given prefix.
func (p *pager) id(prefix string) string {
	p.ids++
	return prefix + strconv.Itoa(p.ids)
}

// Write renders the results as one HTML page.
func Write(w io.Writer, results []*Result, o Options) error {
	title := o.Title
	if title == "" {
		title = "backbench report"
		if len(results) == 1 {
			if st := results[0].study(); st != nil && st.Question != "" {
				title = st.Question
			}
		}
	}
	p := &pager{keepSecrets: o.KeepSecrets}
	b := &p.b
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	fmt.Fprintf(b, "<title>%s</title>\n<style>%s</style>\n</head>\n<body>\n<header>\n<h1>%s</h1>\n", esc(title), css, esc(title))
	var kinds []string
	count := map[Kind]int{}
	for _, r := range results {
		count[r.Kind()]++
	}
	for _, k := range []Kind{KindStudy, KindBench, KindSweep, KindProbe, KindCompare, KindCapacity} {
		if n := count[k]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
		}
	}
	fmt.Fprintf(b, "<p>%s: %s.", plural(len(results), "result"), strings.Join(kinds, ", "))
	if !o.Generated.IsZero() {
		fmt.Fprintf(b, " Page made %s.", o.Generated.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	b.WriteString(" Every point of a chart shows its exact values as a tooltip; a ringed point is a level with failed requests or a cause the record names (a full listen queue, a note), and its tooltip says which.</p>\n")
	ids := make([]string, len(results))
	for i := range results {
		ids[i] = fmt.Sprintf("r%d", i+1)
	}
	// The answers come first, before any chart: what a reader came for.
	p.answers(results, ids)
	b.WriteString("<nav aria-label=\"results\"><ol>\n")
	for i, r := range results {
		fmt.Fprintf(b, "<li><a href=\"#%s\">%s: %s</a></li>\n", ids[i], r.Kind(), esc(r.heading()))
	}
	var benches []*Result
	for _, r := range results {
		if r.Kind() == KindBench {
			benches = append(benches, r)
		}
	}
	if len(benches) > 0 {
		b.WriteString("<li><a href=\"#spectrum\">latency spectrum of the bench runs</a></li>\n")
	}
	b.WriteString("</ol></nav>\n</header>\n<main>\n")
	for i, r := range results {
		fmt.Fprintf(b, "<section class=\"result %s\" id=\"%s\" aria-labelledby=\"%s-h\">\n", r.Kind(), ids[i], ids[i])
		fmt.Fprintf(b, "<h2 id=\"%s-h\">%s: %s</h2>\n", ids[i], kindTitle[r.Kind()], esc(r.heading()))
		p.provenance(r)
		switch r.Kind() {
		case KindSweep:
			p.sweep(r.sweep())
		case KindBench:
			p.bench(r.bench())
			p.timeline(r.record())
		case KindProbe:
			p.probe(r.probe())
		case KindCapacity:
			p.capacity(r.capacity())
		case KindStudy:
			p.study(r.study())
		case KindCompare:
			c := r.compare()
			if len(c.Files) > 0 {
				fmt.Fprintf(b, "<p>Compared: %s; noise threshold %g%%.", esc(strings.Join(c.Files, ", ")), c.Noise*100)
				if c.Forced {
					b.WriteString(" <strong>Forced</strong>: the files differ in target or load shape.")
				}
				b.WriteString("</p>\n")
			}
			p.comparisons(c.Comparisons)
			p.notes("Notes", c.Notes)
		}
		b.WriteString("</section>\n")
	}
	if len(benches) > 0 {
		b.WriteString("<section class=\"result spectrum\" id=\"spectrum\" aria-labelledby=\"spectrum-h\">\n<h2 id=\"spectrum-h\">Latency spectrum of the bench runs</h2>\n")
		c := &chart{id: p.id("c"), title: "latency percentile spectrum, every bench run", xLabel: "percentile (log scale of 1/(1-p))",
			yLabel: "total request time (ms)", spectrum: true}
		for i, r := range benches {
			c.lines = append(c.lines, spectrumLine(r.Name, i, r.bench()))
		}
		c.svg(b)
		b.WriteString("</section>\n")
	}
	fmt.Fprintf(b, "</main>\n<script>%s</script>\n</body>\n</html>\n", script)
	_, err := io.WriteString(w, b.String())
	return err
}

// heading names r in its section's heading and the page's contents: a
// study by its question, anything else by its file.
func (r *Result) heading() string {
	if st := r.study(); st != nil && st.Question != "" {
		return st.Question
	}
	return r.Name
}

var kindTitle = map[Kind]string{KindStudy: "Study", KindBench: "Bench", KindSweep: "Sweep", KindProbe: "Probe", KindCompare: "Comparison", KindCapacity: "Capacity"}

// provenance writes what was run, when and where.
func (p *pager) provenance(r *Result) {
	var b strings.Builder
	dd := func(k, v string) { fmt.Fprintf(&b, "<dt>%s</dt><dd>%s</dd>\n", k, v) }
	m := r.meta()
	env := m.Environment
	if r.heading() != r.Name {
		dd("file", "<code>"+esc(r.Name)+"</code>")
	}
	if env != nil && len(env.Command) > 0 {
		argv := env.Command
		if !p.keepSecrets {
			argv = load.RedactArgs(argv, "")
		}
		dd("command", "<code>"+esc(shellJoin(argv))+"</code>")
	}
	switch {
	case m.StartedAt > 0:
		when := unixTime(m.StartedAt).Format("2006-01-02 15:04:05 UTC")
		if m.EndedAt > m.StartedAt {
			when += fmt.Sprintf(" (%.1f s)", m.EndedAt-m.StartedAt)
		}
		dd("started", when)
	case !r.ModTime.IsZero():
		dd("file written", r.ModTime.UTC().Format("2006-01-02 15:04:05 UTC")+" (the file records no start time)")
	}
	if env == nil {
		if k := r.Kind(); k == KindBench || k == KindSweep {
			dd("environment", "not recorded (a result saved before run records)")
		}
	} else {
		dd("host", esc(env.Hostname))
		dd("kernel", esc(env.Kernel))
		dd("CPU", fmt.Sprintf("%s, %d CPUs", esc(env.CPUModel), env.CPUs))
		dd("backbench", esc(env.Version))
		dd("Go", esc(env.GoVersion))
	}
	if m.Schema > 0 {
		dd("schema", fnum(float64(m.Schema)))
	}
	if b.Len() > 0 {
		fmt.Fprintf(&p.b, "<dl class=\"prov\">\n%s</dl>\n", b.String())
	}
}

// unixTime converts Unix seconds (with a fraction) to a UTC time.
func unixTime(s float64) time.Time {
	sec, frac := math.Modf(s)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC()
}

// shellJoin quotes argv for a POSIX shell where needed.
func shellJoin(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r))
		}) < 0 {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// cell is one table cell; th makes it a row header.
type cell struct {
	text  string // already escaped HTML
	class string
	th    bool
}

// txt, num and hdr make cells from plain text.
func txt(s string) cell { return cell{text: esc(s)} }
func num(s string) cell { return cell{text: esc(s), class: "num"} }
func hdr(s string) cell { return cell{text: esc(s), th: true} }

// table writes a <table> with a caption, column headers and rows.
func (p *pager) table(caption string, head []string, rows [][]cell) {
	b := &p.b
	fmt.Fprintf(b, "<div class=\"tw\"><table>\n<caption>%s</caption>\n<thead><tr>", esc(caption))
	for _, h := range head {
		fmt.Fprintf(b, "<th scope=\"col\">%s</th>", esc(h))
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for _, r := range rows {
		p.row(r)
	}
	b.WriteString("</tbody></table></div>\n")
}

// row writes one <tr>.
func (p *pager) row(r []cell) {
	b := &p.b
	b.WriteString("<tr>")
	for _, c := range r {
		tag, attr := "td", ""
		if c.th {
			tag, attr = "th", " scope=\"row\""
		}
		if c.class != "" {
			attr += " class=\"" + c.class + "\""
		}
		fmt.Fprintf(b, "<%s%s>%s</%s>", tag, attr, c.text, tag)
	}
	b.WriteString("</tr>\n")
}

// classes lists the failure classes with a count, "connect 700, timeout 3".
func classes(f stats.Failures) string {
	var out []string
	for _, c := range failureClasses(f) {
		if c.n > 0 {
			out = append(out, fmt.Sprintf("%s %d", c.name, c.n))
		}
	}
	return strings.Join(out, ", ")
}

// class is one failure class and its count.
type class struct {
	name string
	n    int64
}

// failureClasses are the classes of f in the report's order.
func failureClasses(f stats.Failures) []class {
	return []class{{"connect", f.Connect}, {"receive", f.Receive}, {"length", f.Length},
		{"exceptions", f.Exceptions}, {"timeout", f.Timeout}, {"protocol", f.Protocol}}
}

// failedText says how many requests of a level failed, for a tooltip.
func failedText(s *stats.Summary) string {
	if s.Failed == 0 {
		return ""
	}
	return fmt.Sprintf("; %d failed of %d finished (%.1f%%: %s)", s.Failed, s.Finished(),
		s.FailureRatio()*100, classes(s.Failures))
}

// ci formats an interval "[lo, hi]" with the given decimals, or "".
func ci(v []float64, dec int) string {
	if len(v) != 2 {
		return ""
	}
	return fmt.Sprintf("%s to %s", strconv.FormatFloat(v[0], 'f', dec, 64), strconv.FormatFloat(v[1], 'f', dec, 64))
}

// spectrumLine is the percentile spectrum of one run as a chart line: ab's
// ranks and the spectrum's, 50 to 99.999.
func spectrumLine(label string, style int, s *stats.Summary) *line {
	l := &line{label: label, style: style}
	if s.Complete == 0 {
		return l
	}
	seen := map[float64]float64{}
	for _, m := range []map[string]float64{s.Percentiles, s.Spectrum} {
		for k, v := range m {
			pc, err := strconv.ParseFloat(k, 64)
			if err == nil && pc >= 50 && pc < 100 {
				seen[pc] = v
			}
		}
	}
	var ps []float64
	for pc := range seen {
		ps = append(ps, pc)
	}
	sort.Float64s(ps)
	causes := causesText(s)
	for i, pc := range ps {
		// A run with failures or a cause is ringed once, at its first
		// point (the line is the level), whose tooltip says the cause.
		tip := fmt.Sprintf("%s: p%s = %.3f ms%s", label, fnum(pc), seen[pc], failedText(s))
		if i == 0 {
			tip += causes
		}
		l.pts = append(l.pts, point{x: spectrumX(pc), y: seen[pc], failed: (s.Failed > 0 || causes != "") && i == 0, tip: tip})
	}
	return l
}

// verdictClass maps a verdict word to its colour class.
func verdictClass(v string) string {
	switch v {
	case "faster", "lower", "smaller":
		return "v-better"
	case "slower", "higher", "larger":
		return "v-worse"
	}
	return "v-same"
}

// maxNumber returns the larger of a comparison's two failed shares, 0
// if none.
func maxNumber(f *trials.Sides) float64 {
	if f == nil {
		return 0
	}
	return math.Max(f.Series, f.Baseline)
}

// comparisons writes the comparisons with their verdicts, one table body
// per pair (the group a sentence of the answers says), the verdict first
// after the level and metric so that it is never off-screen: the word on
// a coloured cell, with the failed share when either side failed. A long
// list is folded under its summary.
func (p *pager) comparisons(cs []trials.Comparison) {
	if len(cs) == 0 {
		p.b.WriteString("<p>No comparisons in this file.</p>\n")
		return
	}
	opt := func(v *float64, dec int) string {
		if v == nil {
			return "-"
		}
		return strconv.FormatFloat(*v, 'f', dec, 64)
	}
	side := func(v *float64, iv []float64, trials int, dec int) cell {
		val := opt(v, dec)
		if len(iv) == 2 {
			val += " [" + ci(iv, dec) + "]"
		}
		return num(val + " (" + plural(trials, "trial") + ")")
	}
	type group struct {
		head string
		rows [][]cell
	}
	var groups []*group
	byHead := map[string]*group{}
	for _, c := range cs {
		series, baseline := c.Series, c.Baseline
		if c.File != "" {
			series += " (" + c.File + ")"
		}
		if c.BaselineFile != "" {
			baseline += " (" + c.BaselineFile + ")"
		}
		head := series + " against " + baseline
		if g := cmp.Or(c.FactorTitle, c.Factor); g != "" {
			head = g + ": " + head
		}
		g := byHead[head]
		if g == nil {
			g = &group{head: head}
			byHead[head] = g
			groups = append(groups, g)
		}
		level := strconv.Itoa(c.Concurrency)
		dec := 2
		if c.Metric == "p99_ms" {
			dec = 3
		}
		verdict := c.Verdict
		if verdict == "none" && c.Unanswered != "" {
			verdict = "–, no answer"
		} else if verdict == "none" && c.MostlyFailed != "" {
			verdict = trials.MostlyFailedText
		} else if verdict == "none" {
			// No verdict: why, as the text table says it.
			verdict = "–, " + plural(min(c.Trials, c.BaselineTrials), "trial")
		} else if m := c.MoreText(); m != "" {
			verdict += ": " + m
		}
		if f := maxNumber(c.FailedRatio); f > 0 {
			verdict += fmt.Sprintf(" (%.0f%% failed)", f*100)
		}
		g.rows = append(g.rows, []cell{{text: esc(level), class: "num", th: true}, txt(metricWords(c.Metric)),
			{text: esc(verdict + map[bool]string{true: " *", false: ""}[c.ShortTrials > 0]), class: "verdict " + verdictClass(c.Verdict)},
			num(opt(c.Ratio, 3)), num(ci(c.RatioCI95, 3)), num(strconv.FormatFloat(c.PValue, 'f', 3, 64)),
			side(c.Value, c.ValueCI95, c.Trials, dec), side(c.BaselineValue, c.BaselineValueCI95, c.BaselineTrials, dec)})
	}
	b := &p.b
	fold := len(cs) > 12
	if fold {
		fmt.Fprintf(b, "<details class=\"fold\"><summary>%s in %s (the answers above sum them up)</summary>\n", plural(len(cs), "comparison"), plural(len(groups), "pair"))
	}
	b.WriteString("<div class=\"tw\"><table class=\"comparisons\">\n<caption>Comparisons: each series against its baseline (ratio = series / baseline; faster, slower, lower or higher only when p &lt; 0.05 and the whole interval lies outside the noise; same when it lies wholly inside; undecided otherwise)</caption>\n<thead><tr>")
	var confs []float64
	for i := range cs {
		confs = append(confs, trials.MedianConfidence(cs[i].Trials), trials.MedianConfidence(cs[i].BaselineTrials))
	}
	med := trials.IntervalLabel(confs...)
	for _, h := range []string{"concurrency", "metric", "verdict", "ratio", "ratio " + trials.RatioLabel(cs), "p", "series: median [" + med + "]", "baseline: median [" + med + "]"} {
		fmt.Fprintf(b, "<th scope=\"col\">%s</th>", esc(h))
	}
	b.WriteString("</tr></thead>\n")
	for _, g := range groups {
		fmt.Fprintf(b, "<tbody>\n<tr class=\"group\"><th scope=\"rowgroup\" colspan=\"8\">%s</th></tr>\n", esc(g.head))
		for _, r := range g.rows {
			p.row(r)
		}
		b.WriteString("</tbody>\n")
	}
	b.WriteString("</table></div>\n")
	if fold {
		b.WriteString("</details>\n")
	}
}

// notes writes a list of notes under a heading, if any.
func (p *pager) notes(title string, notes []string) {
	if len(notes) == 0 {
		return
	}
	fmt.Fprintf(&p.b, "<h3>%s</h3>\n<ul class=\"notes\">\n", esc(title))
	for _, n := range notes {
		fmt.Fprintf(&p.b, "<li>%s</li>\n", esc(n))
	}
	p.b.WriteString("</ul>\n")
}

// plural writes "1 result", "2 results".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// esc escapes text for HTML.
func esc(s string) string { return html.EscapeString(s) }

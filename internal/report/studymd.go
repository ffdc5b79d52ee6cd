package report

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/trials"
)

// StudyMarkdown writes a study as Markdown (study --format markdown): its
// question and how its verdicts were made, the answers as a list (each
// factor's conclusion, its details under it), then one GFM table per
// factor with a comparison: a row per pair (the factor's level against
// its baseline), the other factors' levels, the concurrency, the metric,
// the ratio with its interval and the verdict. Every pair's req/s is a
// row; another metric is a row where its verdict is a direction (the
// rest is "no direction", as the answers say). The notes and the command
// that made it close it.
func StudyMarkdown(w io.Writer, d *document.Study, command string) error {
	res := d.Result
	bw := bufio.NewWriter(w)
	head := fmt.Sprintf("verdicts on ratio intervals of %s, noise %.0f%%",
		strings.TrimSuffix(trials.RatioLabel(res.Comparisons), " interval"), 100*res.Noise)
	if f := res.FalseDiscoveries; f != nil {
		head += "; " + f.Text()
	}
	fmt.Fprintf(bw, "**%s** (%s)\n\n", mdText(res.Question), mdText(head))
	if res.Incomplete {
		bw.WriteString("The study was interrupted: these answers rest on the rounds that finished.\n\n")
	}
	for _, a := range res.Answers {
		fmt.Fprintf(bw, "- %s\n", mdText(a.Conclusion))
		for _, det := range a.Details {
			fmt.Fprintf(bw, "  - %s\n", mdText(det))
		}
	}
	if len(res.Answers) > 0 {
		bw.WriteString("\n")
	}
	levels := map[string]map[string]string{}
	for _, s := range res.Series {
		levels[s.Label] = s.Levels
	}
	for _, f := range res.Factors {
		var cs []trials.Comparison
		for _, c := range res.Comparisons {
			if c.Factor != f.Name {
				continue
			}
			if c.Metric == trials.MetricRequestsPerSecond || direction(c.Verdict) {
				cs = append(cs, c)
			}
		}
		if len(cs) == 0 {
			continue
		}
		fmt.Fprintf(bw, "Factor %s (baseline %s):\n\n", CodeSpan(f.Name), CodeSpan(f.Baseline))
		var rows [][]string
		for _, c := range cs {
			sl, bl := levels[c.Series], levels[c.Baseline]
			pair := c.Series + " vs " + c.Baseline
			if sl != nil && bl != nil {
				pair = sl[f.Name] + " vs " + bl[f.Name]
			}
			rows = append(rows, []string{pair, others(sl, f.Name), fmt.Sprint(c.Concurrency), metricName(c.Metric), c.RatioText(), c.VerdictText()})
		}
		mdTable(bw, []string{"pair", "at", "c", "metric", "ratio [" + trials.RatioLabel(cs) + "]", "verdict"},
			[]bool{false, false, true, false, true, false}, rows)
		bw.WriteString("\n")
	}
	if len(res.Notes) > 0 {
		bw.WriteString("Notes:\n\n")
		for _, n := range res.Notes {
			fmt.Fprintf(bw, "- %s\n", mdText(n))
		}
	}
	madeWith(bw, command)
	return bw.Flush()
}

// direction reports whether v is a direction (faster, lower...): not
// same, undecided nor none.
func direction(v string) bool {
	switch v {
	case trials.Same, trials.Undecided, trials.NoVerdict, "":
		return false
	}
	return true
}

// others is the levels of every factor but name, "a=x, b=y" in the order
// of their names ("-" without any).
func others(levels map[string]string, name string) string {
	var out []string
	for k, v := range levels {
		if k != name {
			out = append(out, k+"="+v)
		}
	}
	if len(out) == 0 {
		return "-"
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

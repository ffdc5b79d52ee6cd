package page

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/backbench/backbench/internal/study"
)

// threeFactorFile is a real three-factor study's document:
// testdata/study-3factors.yaml (the built-in FastCGI backend, serial or
// threaded, on TCP or a Unix socket, with keep-alive off or on: 8
// series) run by
//
//	backbench study -q --out DIR testdata/study-3factors.yaml
//
// (the file was then named three.yaml, the name its "file" key keeps),
// with the backbench under test first in PATH, DIR/study.json copied
// here as it was written.
const threeFactorFile = "study-3factors.json"

// TestStudyChartsCompare: on a three-factor study's page, each factor's
// charts compare that factor's levels: every chart under a factor holds
// one line per level of the factor (at least two), all of them at one
// combination of the other factors' levels, which its title names; a
// factor has one chart per combination for each figure, and the charts
// of one set share their y scale (the same ticks).
func TestStudyChartsCompare(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", threeFactorFile))
	if err != nil {
		t.Fatal(err)
	}
	var st study.Result
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Factors) != 3 || len(st.Series) != 8 {
		t.Fatalf("%s: %d factors, %d series; want 3 and 8", threeFactorFile, len(st.Factors), len(st.Series))
	}
	bySeries := map[string]*study.Series{}
	for i := range st.Series {
		bySeries[st.Series[i].Label] = &st.Series[i]
	}
	page, err := html.Parse(strings.NewReader(renderData(t, "study.json", data)))
	if err != nil {
		t.Fatal(err)
	}
	sets := withClass(page, "div", "factor-charts")
	if len(sets) != len(st.Factors) {
		t.Fatalf("%d factors' chart sets, want %d", len(sets), len(st.Factors))
	}
	for fi, set := range sets {
		f := st.Factors[fi]
		if got := attr(set, "data-factor"); got != f.Name {
			t.Errorf("chart set %d is of factor %q, want %q", fi, got, f.Name)
		}
		figs := withClass(set, "figure", "chart small")
		// Two figures (req/s, p99) at each of the 4 combinations of the
		// two other factors' levels.
		if len(figs) != 2*4 {
			t.Errorf("factor %s: %d charts, want 8", f.Name, len(figs))
		}
		for _, fig := range figs {
			title := text(find(find(fig, "svg")[0], "title")[0])
			var levels []string
			others := map[string]bool{}
			for _, g := range withClass(fig, "g", "series") {
				var label string
				for _, p := range find(g, "path") {
					if strings.HasPrefix(attr(p, "class"), "pt") {
						label, _, _ = strings.Cut(titleOf(p), ", c=")
						break
					}
				}
				se := bySeries[label]
				if se == nil {
					t.Errorf("%s: a line of no series (%q)", title, label)
					continue
				}
				if len(find(g, "polyline")) != 1 || len(withClass(g, "polygon", "band")) != 1 {
					t.Errorf("%s: the line of %s has no polyline or no band", title, label)
				}
				levels = append(levels, se.Levels[f.Name])
				var rest []string
				for _, o := range st.Factors {
					if o.Name != f.Name {
						rest = append(rest, o.Name+"="+se.Levels[o.Name])
					}
				}
				others[strings.Join(rest, ", ")] = true
			}
			if !slices.Equal(levels, f.Levels) {
				t.Errorf("%s: lines at %s=%q, want one per level %q", title, f.Name, levels, f.Levels)
			}
			if len(others) != 1 {
				t.Errorf("%s: lines at more than one combination of the other factors: %v", title, others)
			}
			for k := range others {
				if !strings.HasPrefix(title, k+": ") {
					t.Errorf("chart %q is not titled by its other factors' levels %q", title, k)
				}
			}
		}
		// One y scale across each set of multiples.
		for _, m := range withClass(set, "div", "multiples") {
			var first string
			for i, fig := range find(m, "figure") {
				var ticks []string
				for _, tx := range withClass(fig, "text", "tick") {
					ticks = append(ticks, attr(tx, "y")+":"+text(tx))
				}
				if i == 0 {
					first = strings.Join(ticks, " ")
				} else if got := strings.Join(ticks, " "); got != first {
					t.Errorf("factor %s: small multiples on different scales:\n%s\n%s", f.Name, first, got)
				}
			}
		}
		// The legend names the factor's levels, once.
		var legend []string
		for _, ul := range withClass(set, "ul", "legend-strip") {
			for _, li := range find(ul, "li") {
				legend = append(legend, text(li))
			}
		}
		if want := append(slices.Clone(f.Levels), f.Levels...); !slices.Equal(legend, want) {
			t.Errorf("factor %s: legends %q, want %q", f.Name, legend, want)
		}
	}
}

// TestStudyChartsMerged: a two-factor study (2 × 2) compares one pair a
// chart, so each factor gets one chart per figure holding the four
// series, its legend naming each by its levels.
func TestStudyChartsMerged(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", threeFactorFile))
	if err != nil {
		t.Fatal(err)
	}
	var st study.Result
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	// Keep the series of the serial server, and drop the factor.
	st.Factors = st.Factors[1:]
	var keep []study.Series
	for _, se := range st.Series {
		if se.Levels["server"] == "serial" {
			delete(se.Levels, "server")
			keep = append(keep, se)
		}
	}
	st.Series = keep
	st.Answers = slices.DeleteFunc(st.Answers, func(a study.Answer) bool { return a.Factor == "server" })
	raw, err := json.Marshal(&st)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["kind"] = "study"
	page := renderStudy(t, doc)
	sets := withClass(page, "div", "factor-charts")
	if len(sets) != 2 {
		t.Fatalf("%d chart sets, want 2", len(sets))
	}
	for _, set := range sets {
		figs := withClass(set, "figure", "chart")
		if len(figs) != 2 || len(withClass(set, "figure", "chart small")) != 0 {
			t.Errorf("factor %s: %d charts, want 2 (one per figure, not small)", attr(set, "data-factor"), len(figs))
		}
		for _, fig := range figs {
			var legend []string
			for _, it := range withClass(fig, "g", "legend-item") {
				legend = append(legend, titleOf(it))
			}
			if want := []string{"tcp off", "unix off", "tcp on", "unix on"}; attr(set, "data-factor") == "transport" && !slices.Equal(legend, want) {
				t.Errorf("transport's legend %q, want %q", legend, want)
			}
			if len(withClass(fig, "g", "series")) != 4 {
				t.Errorf("factor %s: %d lines, want 4", attr(set, "data-factor"), len(withClass(fig, "g", "series")))
			}
		}
	}
}

package main

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/report/page"
)

const reportUsage = `Usage: backbench report [-o FILE] RESULT.json...

Renders saved results (the JSON of bench --format json, sweep.json, probe
--format json, compare --format json, capacity.json; any mix) as one
self-contained HTML page: what was run and where, charts drawn as SVG (every
point's values in its tooltip, levels with failed requests ringed, a
failure-ratio panel when any level failed, a capacity objective as a
line), latency percentile spectra, and every figure in tables.
The page makes no request to any file or network address.

Flags:
`

// newReportFlags builds report's flags; out receives -o.
// --keep-secrets is read back with fs.GetBool.
func newReportFlags(out *string) *pflag.FlagSet {
	fs := newFlagSet("report")
	fs.SortFlags = false
	fs.StringVarP(out, "output", "o", "report.html", "write the page to `FILE`")
	addShareFlags(fs, &shareOptions{}, false)
	return fs
}

// reportCmd is backbench report.
func reportCmd(args []string, stdout io.Writer) error {
	var out string
	fs := newReportFlags(&out)
	if err := parseFlags(fs, reportUsage, args, stdout); err != nil {
		return err
	}
	keepSecrets, _ := fs.GetBool("keep-secrets")
	if fs.NArg() == 0 {
		return usagef("report: want at least one RESULT.json (see backbench report --help)")
	}
	var results []*page.Result
	for _, name := range fs.Args() {
		read := page.ReadFileRedacted
		if keepSecrets {
			read = page.ReadFile
		}
		r, err := read(name)
		if err != nil {
			return usagef("report: %v", err)
		}
		results = append(results, r)
	}
	var b bytes.Buffer
	if err := page.Write(&b, results, page.Options{Generated: time.Now(), KeepSecrets: keepSecrets}); err != nil {
		return err
	}
	if err := report.WriteFileAtomic(out, func(w io.Writer) error { _, err := w.Write(b.Bytes()); return err }); err != nil {
		return usagef("report: %v", err)
	}
	fmt.Fprintf(stdout, "Wrote %s\n", out)
	return nil
}

// sweepPage writes sweep.html: the page of the sweep's own JSON, as
// backbench report would render the saved sweep.json (name).
func sweepPage(w io.Writer, sw *report.Sweep, name string, keepSecrets bool) error {
	return page.WriteOwn(w, sw, name, "sweep", keepSecrets)
}

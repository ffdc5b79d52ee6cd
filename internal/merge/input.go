// Package merge is merge's model: the runs of several generators read
// from their saved results (a bench run's record, a sweep's records; many
// in one input too), refused when they cannot be merged, and merged by
// the one merge (stats.Merger, as generators that ran together) into the
// merged kinds of the result model (document.MergedRun,
// document.MergedSweep), with each generator's own figures and how they
// were merged (document.MergeInfo). It reads saved results through
// document.Read only.
package merge

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/stats"
)

// Input is one run given to merge: a bench run's record or a sweep.
type Input struct {
	// File names the input: the file as given, FILE#K for the K-th run
	// of a file of several.
	File string
	// Record is a bench run's record, Sweep a sweep (one of them is set).
	Record *stats.Record
	Sweep  *document.Sweep
	// ID is the SHA-256 of the run's saved content (see RunID).
	ID [sha256.Size]byte
}

// Each reads the JSON values of r, the content of the input name, one
// after the other and gives each to fn with its rank k (from 1) as soon
// as it is read, so that an input of many runs is never held whole:
// several generators' outputs may come in one file (GNU parallel's or
// kubectl logs' output); each is then named FILE#K.
func Each(name string, r io.Reader, fn func(k int, in Input) error) error {
	st := document.NewStream(r)
	k := 0
	for {
		raw, err := st.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		k++
		label := name
		if k > 1 {
			label = fmt.Sprintf("%s#%d", name, k)
		}
		in, err := Decode(label, raw)
		if err != nil {
			return err
		}
		if err := fn(k, in); err != nil {
			return err
		}
	}
	if k == 0 {
		return fmt.Errorf("%s: empty", name)
	}
	return nil
}

// RunID identifies a saved run by its content: the SHA-256 of its JSON
// with the white space taken out. The content, not the path, because a
// symlink, a copy, standard input or a bench report holding the same
// record are the same run; and the whole content rather than a few fields
// (host, start, end) because two generators started together by
// --start-at on one host can share those, while no two runs share every
// nanosecond sum, CPU second and histogram bucket.
func RunID(raw []byte) [sha256.Size]byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return sha256.Sum256(raw)
	}
	return sha256.Sum256(b.Bytes())
}

// Decode reads a bench JSON report (its "record"), a bare record, or a
// sweep.json (its series' "records"), merged ones too, through
// document.Read, and checks that its records can be merged (CheckRecord).
func Decode(name string, b []byte) (Input, error) {
	in := Input{File: name}
	bad := func(err error) error { return fmt.Errorf("%s: %v", name, err) }
	noRecord := bad(fmt.Errorf("no run record: want the JSON of bench --format json or a sweep.json"))
	d, err := document.Read(name, b)
	var syntax *json.SyntaxError
	switch {
	case errors.Is(err, document.ErrBadContent) || errors.Is(err, document.ErrNewerSchema):
		return in, err
	case errors.As(err, &syntax):
		return in, bad(fmt.Errorf("not JSON: %v", syntax))
	case err != nil:
		return in, noRecord
	}
	_, benchRec, _ := document.Bench(d)
	switch d := d.(type) {
	case *document.Sweep, *document.MergedSweep:
		in.ID = RunID(b)
		in.Sweep = document.SweepOf(d)
		if len(in.Sweep.Series) == 0 {
			return in, bad(fmt.Errorf("a sweep without series"))
		}
		for _, se := range in.Sweep.Series {
			if len(se.Records) != len(se.Levels) {
				return in, bad(fmt.Errorf("series %q has no run records (made by an older backbench?)", se.Label))
			}
			for _, r := range se.Records {
				if err := CheckRecord(r); err != nil {
					return in, bad(err)
				}
			}
		}
	case *document.Record, *document.Run, *document.Trials, *document.MergedRun:
		rec := benchRec
		if r, ok := d.(*document.Record); ok {
			rec = r.Record
		}
		if rec == nil {
			return in, noRecord
		}
		// The record's own content identifies the run (RunID), as a bare
		// record or in a bench report.
		raw, err := json.Marshal(rec)
		if err != nil {
			return in, bad(err)
		}
		in.ID, in.Record = RunID(raw), rec
		if err := CheckRecord(in.Record); err != nil {
			return in, bad(err)
		}
	default:
		return in, noRecord
	}
	return in, nil
}

// CheckRecord refuses records that cannot be merged as they are: a
// record of another schema, with a negative count or sum (Record.Validate),
// or without its wall-clock start and end.
func CheckRecord(r *stats.Record) error {
	if r == nil {
		return fmt.Errorf("an empty run record")
	}
	if err := r.Validate(); err != nil {
		return fmt.Errorf("record: %v", err)
	}
	if r.StartedAt.IsZero() || r.EndedAt.IsZero() {
		return fmt.Errorf("the run record has no wall-clock start and end")
	}
	return nil
}

package stats

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
)

// EncodeJSON writes v as indented JSON (two spaces, a final newline, as a
// json.Encoder with SetIndent("", "  ") does). It never fails on a float
// that is not finite: JSON has no NaN or Inf, and a run's whole result
// must not be lost at the end for one figure. When v holds one, the figures
// reachable through v's pointers, slices and maps are made finite in place
// (NaN becomes 0, ±Inf ±math.MaxFloat64) and v is encoded again. The flags
// refuse such numbers before a run; this is the defence behind them.
//
// Memory: v is encoded once, compact, and indented on the way out (a
// result of many records, such as a merged sweep, is not held three
// times over: compact, indented and with its newline).
func EncodeJSON(w io.Writer, v any) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	err := json.NewEncoder(&indenter{w: bw}).Encode(v)
	var uve *json.UnsupportedValueError
	if errors.As(err, &uve) {
		MakeFinite(v)
		err = json.NewEncoder(&indenter{w: bw}).Encode(v)
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// indenter indents compact JSON as it is written, with two spaces, as
// json.Indent does: an empty object or array stays {} or [], a colon is
// followed by one space, strings pass unchanged.
type indenter struct {
	w          *bufio.Writer
	inString   bool // inside a string
	escaped    bool // after a backslash inside a string
	needIndent bool // after { or [: a newline unless the value is empty
	depth      int
}

// Write indents p, which continues what was written before.
func (d *indenter) Write(p []byte) (int, error) {
	for _, c := range p {
		if d.inString {
			d.w.WriteByte(c)
			switch {
			case d.escaped:
				d.escaped = false
			case c == '\\':
				d.escaped = true
			case c == '"':
				d.inString = false
			}
			continue
		}
		if d.needIndent && c != '}' && c != ']' {
			d.needIndent = false
			d.depth++
			d.newline()
		}
		switch c {
		case '"':
			d.inString = true
			d.w.WriteByte(c)
		case '{', '[':
			d.needIndent = true
			d.w.WriteByte(c)
		case ',':
			d.w.WriteByte(c)
			d.newline()
		case ':':
			d.w.WriteString(": ")
		case '}', ']':
			if d.needIndent {
				d.needIndent = false
			} else {
				d.depth--
				d.newline()
			}
			d.w.WriteByte(c)
		default:
			d.w.WriteByte(c)
		}
	}
	return len(p), nil
}

// newline starts a line at the current depth.
func (d *indenter) newline() {
	d.w.WriteByte('\n')
	for range d.depth {
		d.w.WriteString("  ")
	}
}

// MakeFinite replaces in place every float that is not finite reachable
// from v through pointers, interfaces, struct fields, slices, arrays and
// maps: NaN by 0, +Inf by math.MaxFloat64, -Inf by -math.MaxFloat64. A
// value not reached through a pointer (v itself, or held in an interface)
// cannot be changed.
func MakeFinite(v any) {
	makeFinite(reflect.ValueOf(v), map[uintptr]bool{})
}

func finite(f float64) float64 {
	switch {
	case math.IsNaN(f):
		return 0
	case math.IsInf(f, 1):
		return math.MaxFloat64
	case math.IsInf(f, -1):
		return -math.MaxFloat64
	}
	return f
}

// makeFinite walks v; seen holds the pointers already walked (a cycle
// would recurse forever).
func makeFinite(v reflect.Value, seen map[uintptr]bool) {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); v.CanSet() && finite(f) != f {
			v.SetFloat(finite(f))
		}
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		makeFinite(v.Elem(), seen)
	case reflect.Interface:
		if !v.IsNil() {
			makeFinite(v.Elem(), seen)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			makeFinite(v.Field(i), seen)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			makeFinite(v.Index(i), seen)
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		it := v.MapRange()
		for it.Next() {
			e := it.Value()
			// A map's values are not addressable: walk a copy, store it back.
			c := reflect.New(e.Type()).Elem()
			c.Set(e)
			makeFinite(c, seen)
			v.SetMapIndex(it.Key(), c)
		}
	}
}

package report

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// formulaStart holds the first bytes that make a spreadsheet read a cell
// as a formula (=, +, -, @) or that some strip before doing so (tab, CR).
const formulaStart = "=+-@\t\r"

// SafeText returns a text cell of a CSV file (a label, a URL, a message)
// as spreadsheets should read it: a cell that would start a formula gets a
// leading single quote ('=HYPERLINK(...)), the OWASP advice for CSV
// injection; csvWriter then quotes it. Other text is returned as is.
func SafeText(s string) (string, bool) {
	if s != "" && strings.IndexByte(formulaStart, s[0]) >= 0 {
		return "'" + s, true
	}
	return s, false
}

// safeValue is SafeText for a cell that is usually a number (a value read
// from a backend's status page): a number, even -5, stays a number.
func safeValue(s string) (string, bool) {
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return s, false
	}
	return SafeText(s)
}

// csvWriter writes CSV rows as encoding/csv's Writer does (a comma between
// cells, "\n" after a row, a cell quoted when it holds a comma, a quote, a
// CR or LF, starts with a space, or is `\.`), and also quotes every cell it
// is told to: the text cells that SafeText changed.
type csvWriter struct {
	w   *bufio.Writer
	err error
}

func newCSVWriter(w io.Writer) *csvWriter { return &csvWriter{w: bufio.NewWriter(w)} }

// csvNeedsQuotes is encoding/csv's rule for a cell that must be quoted.
func csvNeedsQuotes(s string) bool {
	if s == "" {
		return false
	}
	if s == `\.` || strings.ContainsAny(s, ",\"\r\n") {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

// write writes one row; quote, if not nil, says which cells to quote
// whatever they hold.
func (c *csvWriter) write(row []string, quote []bool) {
	if c.err != nil {
		return
	}
	for i, s := range row {
		if i > 0 {
			c.w.WriteByte(',')
		}
		if !(i < len(quote) && quote[i]) && !csvNeedsQuotes(s) {
			c.w.WriteString(s)
			continue
		}
		c.w.WriteByte('"')
		c.w.WriteString(strings.ReplaceAll(s, `"`, `""`))
		c.w.WriteByte('"')
	}
	_, c.err = c.w.WriteString("\n")
}

// flush writes what is buffered and returns the first error.
func (c *csvWriter) flush() error {
	if c.err != nil {
		return c.err
	}
	return c.w.Flush()
}

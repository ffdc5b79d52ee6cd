package page

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"time"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/load"
)

// ReadFile reads the result file name as Parse does, with the file's
// modification time (Result.ModTime) when it can be read.
func ReadFile(name string) (*Result, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	r, err := Parse(name, data)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(name); err == nil {
		r.ModTime = st.ModTime()
	}
	return r, nil
}

// WriteOwn writes the page of the one result d a command made beside its
// saved file name (sweep.html, study.html): d is written and read back
// (Parse), so that the page is the one backbench report draws of the saved
// file, titled "backbench WHAT" (a study: by its question).
func WriteOwn(w io.Writer, d document.Result, name, what string, keepSecrets bool) error {
	var js bytes.Buffer
	if err := document.Write(&js, d); err != nil {
		return err
	}
	r, err := Parse(name, js.Bytes())
	if err != nil {
		return errors.Join(errors.New(what+".html"), err)
	}
	r.ModTime = time.Now()
	title := "backbench " + what
	if r.heading() != r.Name {
		title = r.heading()
	}
	return Write(w, []*Result{r}, Options{Title: title, Generated: time.Now(), KeepSecrets: keepSecrets})
}

// ReadFileRedacted is ReadFile with the credentials of every URL the
// file holds replaced by load.Redacted, whatever version wrote it: every
// JSON string that holds "://" is read through load.RedactURL, and every
// one that starts with "/" (a document path) through load.RedactQuery
// (report without --keep-secrets).
func ReadFileRedacted(name string) (*Result, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	r, err := Parse(name, redactJSONURLs(data))
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(name); err == nil {
		r.ModTime = st.ModTime()
	}
	return r, nil
}

// redactJSONURLs returns the JSON text data with its string values
// redacted as ReadFileRedacted says; every other byte stays (data itself
// when nothing changed).
func redactJSONURLs(data []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(data); i++ {
		if data[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(data) && data[j] != '"' {
			if data[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(data) {
			break
		}
		lit := data[i : j+1]
		if bytes.Contains(lit, []byte("://")) || (len(lit) > 2 && lit[1] == '/' && bytes.IndexByte(lit, '?') > 0) {
			var s string
			if json.Unmarshal(lit, &s) == nil {
				red := load.RedactURL(s)
				if !strings.Contains(s, "://") {
					red = load.RedactQuery(s)
				}
				if red != s {
					q, _ := json.Marshal(red)
					out = append(append(out, data[last:i]...), q...)
					last = j + 1
				}
			}
		}
		i = j
	}
	if out == nil {
		return data
	}
	return append(out, data[last:]...)
}

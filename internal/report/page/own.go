package page

import (
	"bytes"
	"errors"
	"io"
	"os"
	"time"

	"github.com/backbench/backbench/internal/document"
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

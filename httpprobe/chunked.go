package httpprobe

import "errors"

// Chunked decoder limits, in bytes.
const (
	// maxChunkLine bounds a chunk-size line, extensions included.
	maxChunkLine = 4 << 10
	// maxTrailer bounds the trailer section (all its lines).
	maxTrailer = MaxHeadBytes
)

var (
	errChunkSize    = errors.New("httpprobe: chunked: bad chunk size")
	errChunkLine    = errors.New("httpprobe: chunked: chunk-size line too long")
	errChunkEnd     = errors.New("httpprobe: chunked: chunk data not followed by CRLF")
	errChunkCR      = errors.New("httpprobe: chunked: CR not followed by LF")
	errChunkTrailer = errors.New("httpprobe: chunked: trailer section too long")
)

// Chunked decoder states.
const (
	chSizeStart    = iota // at the first hex digit of a chunk size
	chSize                // in the hex digits
	chSizeWS              // in blanks after the digits
	chExt                 // in chunk extensions, up to the line end
	chSizeLF              // after CR of the size line
	chData                // in chunk data
	chDataCR              // after chunk data, expecting CRLF
	chDataLF              // after the CR that follows data
	chTrailerStart        // at the start of a trailer line (or of the final CRLF)
	chTrailer             // in a trailer line
	chTrailerLF           // after the CR of a trailer line
	chEndLF               // after the CR of the final empty line
	chDone                // after the final CRLF
)

// ChunkedDecoder decodes a chunked body (RFC 9112 section 7.1) as a stream:
// feed it the bytes as they arrive, in pieces of any size, with Step. It
// keeps no buffer and never allocates: chunk data is handed back as
// sub-slices of the input. Chunk extensions are skipped, trailer fields are
// skipped, lines may end in CRLF or a bare LF. Its zero value is ready to
// decode one body; Reset readies it for another.
type ChunkedDecoder struct {
	state   uint8
	digits  uint8  // hex digits of the size read so far
	left    uint64 // data bytes left in the current chunk
	line    int    // bytes of the current size line
	trailer int    // bytes of the trailer section
}

// Reset readies d to decode a new body.
func (d *ChunkedDecoder) Reset() { *d = ChunkedDecoder{} }

// Done reports that the whole body, its last chunk and trailer included,
// has been decoded.
func (d *ChunkedDecoder) Done() bool { return d.state == chDone }

// Step decodes a prefix of p: framing bytes, and at most one run of chunk
// data, which it returns as data (a sub-slice of p). It returns the number
// of bytes of p it consumed, which is > 0 whenever p is not empty, no error
// occurred and the body is not done; once Done, Step consumes nothing, so
// p[n:] is whatever follows the body. An error means the framing is broken;
// the decoder is then unusable until Reset.
func (d *ChunkedDecoder) Step(p []byte) (n int, data []byte, err error) {
	for n < len(p) {
		c := p[n]
		switch d.state {
		case chSizeStart, chSize:
			v, ok := unhex(c)
			if !ok {
				if d.state == chSizeStart {
					return n, nil, errChunkSize
				}
				d.state = chSizeWS
				continue // look at c again in chSizeWS
			}
			if d.digits == 16 {
				return n, nil, errChunkSize
			}
			d.digits++
			d.left = d.left<<4 | uint64(v)
			d.state = chSize
			if d.left > 1<<62 {
				return n, nil, errChunkSize
			}
		case chSizeWS:
			switch c {
			case ' ', '\t':
			case ';':
				d.state = chExt
			case '\r':
				d.state = chSizeLF
			case '\n':
				d.endSizeLine()
			default:
				return n, nil, errChunkSize
			}
		case chExt:
			switch c {
			case '\r':
				d.state = chSizeLF
			case '\n':
				d.endSizeLine()
			}
		case chSizeLF:
			if c != '\n' {
				return n, nil, errChunkCR
			}
			d.endSizeLine()
		case chData:
			k := uint64(len(p) - n)
			if k > d.left {
				k = d.left
			}
			data = p[n : n+int(k)]
			n += int(k)
			d.left -= k
			if d.left == 0 {
				d.state = chDataCR
			}
			return n, data, nil
		case chDataCR:
			switch c {
			case '\r':
				d.state = chDataLF
			case '\n':
				d.state = chSizeStart
			default:
				return n, nil, errChunkEnd
			}
		case chDataLF:
			if c != '\n' {
				return n, nil, errChunkEnd
			}
			d.state = chSizeStart
		case chTrailerStart:
			switch c {
			case '\r':
				d.state = chEndLF
			case '\n':
				d.state = chDone
				return n + 1, nil, nil
			default:
				d.state = chTrailer
			}
		case chTrailer:
			switch c {
			case '\r':
				d.state = chTrailerLF
			case '\n':
				d.state = chTrailerStart
			}
		case chTrailerLF:
			if c != '\n' {
				return n, nil, errChunkCR
			}
			d.state = chTrailerStart
		case chEndLF:
			if c != '\n' {
				return n, nil, errChunkCR
			}
			d.state = chDone
			return n + 1, nil, nil
		case chDone:
			return n, nil, nil
		}
		n++
		// Bound the lines that are skipped, so that a server cannot keep
		// the decoder busy forever without sending data.
		switch d.state {
		case chSize, chSizeWS, chExt, chSizeLF:
			d.line++
			if d.line > maxChunkLine {
				return n, nil, errChunkLine
			}
		case chTrailer, chTrailerLF, chTrailerStart, chEndLF:
			d.trailer++
			if d.trailer > maxTrailer {
				return n, nil, errChunkTrailer
			}
		}
	}
	return n, nil, nil
}

// endSizeLine ends a chunk-size line: data follows, or the trailer after the
// last (zero-size) chunk.
func (d *ChunkedDecoder) endSizeLine() {
	d.line, d.digits = 0, 0
	if d.left == 0 {
		d.state = chTrailerStart
	} else {
		d.state = chData
	}
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

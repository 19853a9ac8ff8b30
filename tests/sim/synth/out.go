package main

import (
	"io"
	"strconv"
)

// out appends XML to a small buffer and hands it to the writer every 64 KiB:
// an answer of any size is streamed with constant memory.
type out struct {
	b   []byte
	w   io.Writer
	err error
	n   int64 // bytes handed to w
	// change: properties are written as an ObjectUpdate's changeSets, not
	// an ObjectContent's propSets (render.go propName).
	change bool
}

func newOut(w io.Writer) *out { return &out{b: make([]byte, 0, 80<<10), w: w} }

func (o *out) s(x string) {
	o.b = append(o.b, x...)
	if len(o.b) >= 64<<10 {
		o.flush()
	}
}

func (o *out) i(x int) { o.b = strconv.AppendInt(o.b, int64(x), 10) }

func (o *out) i64(x int64) { o.b = strconv.AppendInt(o.b, x, 10) }

func (o *out) u64(x uint64) { o.b = strconv.AppendUint(o.b, x, 10) }

// hex writes x as exactly n lowercase hex digits.
func (o *out) hex(x uint64, n int) {
	const digits = "0123456789abcdef"
	for k := n - 1; k >= 0; k-- {
		o.b = append(o.b, digits[(x>>(uint(k)*4))&15])
	}
}

// pad writes i with at least n digits.
func (o *out) pad(i, n int) {
	s := strconv.Itoa(i)
	for k := len(s); k < n; k++ {
		o.b = append(o.b, '0')
	}
	o.b = append(o.b, s...)
}

func (o *out) b2(v bool) {
	if v {
		o.b = append(o.b, "true"...)
	} else {
		o.b = append(o.b, "false"...)
	}
}

// esc writes text content escaped for XML.
func (o *out) esc(x string) {
	for k := 0; k < len(x); k++ {
		switch c := x[k]; c {
		case '<':
			o.b = append(o.b, "&lt;"...)
		case '>':
			o.b = append(o.b, "&gt;"...)
		case '&':
			o.b = append(o.b, "&amp;"...)
		default:
			o.b = append(o.b, c)
		}
	}
}

func (o *out) flush() {
	if len(o.b) == 0 {
		return
	}
	if o.err == nil {
		var k int
		k, o.err = o.w.Write(o.b)
		o.n += int64(k)
	}
	o.b = o.b[:0]
}

package marc

import "io"

// peeker buffers just enough of a stream to look at a whole record before
// consuming it. Unlike bufio.Reader its buffer grows with the records it meets
// (to at most MaxRecordLen plus one read), so typical 1 KB records cost a 4 KB
// buffer, not 100 KB.
type peeker struct {
	r     io.Reader
	buf   []byte // buf[start:] is buffered, unread input
	start int
	err   error // from r; returned once the buffer is drained
}

// Peek returns the next n bytes without consuming them. If fewer are left it
// returns what there is and the error that stopped it (io.EOF at the end). The
// slice is valid until the next Peek or Discard.
func (p *peeker) Peek(n int) ([]byte, error) {
	for len(p.buf)-p.start < n && p.err == nil {
		if cap(p.buf)-len(p.buf) < 4096 {
			avail := len(p.buf) - p.start
			if avail+4096 <= cap(p.buf)/2 {
				// Enough room once the consumed bytes are dropped.
				copy(p.buf[:avail], p.buf[p.start:])
				p.buf, p.start = p.buf[:avail], 0
			} else {
				nb := make([]byte, avail, max(2*cap(p.buf), n+4096, 8192))
				copy(nb, p.buf[p.start:])
				p.buf, p.start = nb, 0
			}
		}
		m, err := p.r.Read(p.buf[len(p.buf):cap(p.buf)])
		p.buf = p.buf[:len(p.buf)+m]
		if err != nil {
			p.err = err
		} else if m == 0 {
			p.err = io.ErrNoProgress
		}
	}
	if avail := len(p.buf) - p.start; avail < n {
		return p.buf[p.start:], p.err
	}
	return p.buf[p.start : p.start+n], nil
}

// Discard consumes n bytes, which must have been peeked.
func (p *peeker) Discard(n int) {
	p.start += n
	if p.start == len(p.buf) {
		p.buf, p.start = p.buf[:0], 0
	}
}

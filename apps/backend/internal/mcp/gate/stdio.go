package gate

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"
	"sync"
)

// stdioBufferSize is the read buffer for stdio input; lines longer than it
// are assembled in the line buffer, which is capped at MaxMessageBytes+1.
const stdioBufferSize = 64 << 10

// SyncWriter serialises writes to w. The stdio transport shares one output
// between mcp-go's responses and the gate's error responses; each writes a
// whole line per Write call, so locking each Write keeps lines intact.
type SyncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// NewSyncWriter returns a SyncWriter over w.
func NewSyncWriter(w io.Writer) *SyncWriter { return &SyncWriter{w: w} }

// Write writes p to the underlying writer while holding the lock.
func (s *SyncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// Stdio returns the reader to hand to mcp-go's stdio server in place of in.
// It reads in line by line, never holding more than MaxMessageBytes+1 bytes
// of a line: an over-long line is discarded up to its newline. Accepted lines
// come out unchanged, each terminated by '\n'; blank lines are skipped; for a
// rejected line the error response plus '\n' is written to out (in one Write
// call; pass a SyncWriter shared with mcp-go), except for notifications,
// which get no answer. EOF of in is EOF of the returned reader; a write error
// on out is returned from Read. The reader has no goroutines of its own and
// is not safe for concurrent Reads.
func Stdio(in io.Reader, out io.Writer) io.Reader {
	return &stdioReader{in: bufio.NewReaderSize(in, stdioBufferSize), out: out}
}

type stdioReader struct {
	in      *bufio.Reader
	out     io.Writer
	line    []byte // current line, reused; at most MaxMessageBytes+1 bytes
	pending []byte // unread rest of the accepted line, '\n'-terminated
	err     error  // sticky input error
}

// Read implements io.Reader.
func (s *stdioReader) Read(p []byte) (int, error) {
	for len(s.pending) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		if err := s.nextLine(); err != nil {
			return 0, err
		}
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

// nextLine reads one line and either makes it pending or answers it with an
// error. It returns only write errors; input errors are kept in s.err.
func (s *stdioReader) nextLine() error {
	tooLarge := s.readLine()
	if tooLarge {
		return s.reject(newError(failTooLarge, nil, false))
	}
	if len(bytes.Trim(s.line, " \t\r\n")) == 0 {
		return nil
	}
	if e := Check(s.line); e != nil {
		return s.reject(e)
	}
	s.pending = appendCapped(s.line, []byte{'\n'})
	s.line = s.pending[:0]
	return nil
}

// readLine reads the next line (without its '\n') into s.line and reports
// whether it was longer than MaxMessageBytes; such a line is consumed to its
// end but not kept. At end of input s.err is set and s.line holds any final
// unterminated line.
func (s *stdioReader) readLine() (tooLarge bool) {
	s.line = s.line[:0]
	for {
		chunk, err := s.in.ReadSlice('\n')
		// A chunk ending in '\n' carries at most MaxMessageBytes+1 bytes
		// with it; any other chunk that takes the line past that is over.
		if !tooLarge && len(s.line)+len(chunk) > MaxMessageBytes+1 {
			tooLarge = true
			s.line = s.line[:0]
		}
		if !tooLarge {
			s.line = appendCapped(s.line, chunk)
		}
		switch {
		case err == nil:
			s.line = bytes.TrimSuffix(s.line, []byte{'\n'})
			return tooLarge || len(s.line) > MaxMessageBytes
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			s.err = err
			return tooLarge || len(s.line) > MaxMessageBytes
		default: // a broken input: drop the partial line
			s.err = err
			s.line = s.line[:0]
			return false
		}
	}
}

// appendCapped appends src to dst, growing dst to at most MaxMessageBytes+1
// bytes of capacity (the caller never appends past that).
func appendCapped(dst, src []byte) []byte {
	if need := len(dst) + len(src); need > cap(dst) {
		dst = slices.Grow(dst, min(max(2*cap(dst), need), MaxMessageBytes+1)-len(dst))
	}
	return append(dst, src...)
}

// reject writes e's response to out unless e is for a notification.
func (s *stdioReader) reject(e *RPCError) error {
	if e.Notification {
		return nil
	}
	if _, err := s.out.Write(append(e.Response(), '\n')); err != nil {
		return err
	}
	return nil
}

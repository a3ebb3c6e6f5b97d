package compose

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// MaxLogBytes caps each service's saved log: results are an artifact, often public.
const MaxLogBytes = 4 << 20

// logScrub writes a service's log with every secret value replaced by "***", up
// to max bytes. Call Close to write the last partial line.
type logScrub struct {
	w       io.Writer
	secrets []string
	max     int64
	n       int64
	cut     bool
	buf     []byte
}

func newLogScrub(w io.Writer, secrets []string, max int64) *logScrub {
	var s []string
	for _, v := range secrets {
		if len(v) >= 3 { // shorter values would blank ordinary text (as ::add-mask:: does)
			s = append(s, v)
		}
	}
	return &logScrub{w: w, secrets: s, max: max}
}

func (l *logScrub) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		if err := l.line(l.buf[:i+1]); err != nil {
			return 0, err
		}
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > 64<<10 { // a line without end: written in pieces
		if err := l.line(l.buf); err != nil {
			return 0, err
		}
		l.buf = l.buf[:0]
	}
	return len(p), nil
}

func (l *logScrub) Close() error {
	if len(l.buf) == 0 {
		return nil
	}
	err := l.line(l.buf)
	l.buf = nil
	return err
}

func (l *logScrub) line(b []byte) error {
	if l.cut {
		return nil
	}
	s := l.scrub(string(b))
	if l.n+int64(len(s)) > l.max {
		l.cut = true
		_, err := fmt.Fprintf(l.w, "\n[loadgate: log cut at %d MiB]\n", l.max>>20)
		return err
	}
	l.n += int64(len(s))
	_, err := io.WriteString(l.w, s)
	return err
}

func (l *logScrub) scrub(s string) string {
	for _, v := range l.secrets {
		s = strings.ReplaceAll(s, v, "***")
	}
	return s
}

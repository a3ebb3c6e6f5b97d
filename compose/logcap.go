package compose

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// MaxLogBytes caps each service's saved log: results are an artifact, often public.
const MaxLogBytes = 4 << 20

// logChunk is how much of a line without end is held before it is written in pieces.
const logChunk = 64 << 10

// minSecret is the shortest value scrubbed: shorter ones would blank ordinary text (as
// ::add-mask:: does); minEncoded the shortest whose base64 forms are scrubbed too.
const (
	minSecret  = 3
	minEncoded = 8
)

// jobEnv is the process's environment as it started: the job's, with the runner's
// credentials the gate unsets later (action.UnsetRunnerSecrets) still in it.
var jobEnv = os.Environ()

// secretWords in a variable's name mark its value secret (GitHub gives a workflow's secrets
// to a step as environment variables, the action's inputs as INPUT_*); secretParts are
// words that do so only whole (PAT, not PATH).
var (
	secretWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE", "APIKEY", "API_KEY", "ACCESS_KEY"}
	secretParts = []string{"KEY", "PAT", "PASS", "PW", "AUTH", "COOKIE", "SIGNATURE"}
)

// SecretName reports whether an environment variable's name looks like it holds a secret: it
// contains TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL, PRIVATE, APIKEY, API_KEY or ACCESS_KEY
// (so INPUT_TOKEN, GITHUB_TOKEN, ACTIONS_RUNTIME_TOKEN), or has KEY, PAT, PASS, PW, AUTH, COOKIE
// or SIGNATURE as a word (split at _ - .: NPM_PAT, not PATH).
func SecretName(name string) bool {
	up := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	for _, part := range strings.FieldsFunc(up, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		if slices.Contains(secretParts, part) {
			return true
		}
	}
	return false
}

// upSecrets are what Up scrubs: given's, and the secrets of the job's environment now and as
// the process started (with the runner's credentials that the gate unsets before any stack).
func upSecrets(given []string) []string {
	return logSecrets(given, append(slices.Clone(jobEnv), os.Environ()...))
}

// logSecrets are the values scrubbed from saved logs: given's (the scenario's ${ENV} values)
// and those of environ's variables that SecretName marks, of at least minEncoded bytes (a
// shorter one, "true" or "tty", is a setting, and would blank ordinary text).
func logSecrets(given, environ []string) []string {
	out := slices.Clone(given)
	for _, kv := range environ {
		if name, v, ok := strings.Cut(kv, "="); ok && SecretName(name) && len(v) >= minEncoded {
			out = append(out, v)
		}
	}
	return out
}

// scrubForms are the strings that stand for secrets in a log: each value of at least
// minSecret bytes, each line of a value of several, and for values of at least minEncoded
// bytes their base64 forms (standard and URL alphabets, at the three alignments a value
// can have inside a longer encoded text, as in Basic auth's base64("user:" + token)).
// Longest first, so a value is replaced before any shorter one inside it.
func scrubForms(secrets []string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if len(s) >= minSecret && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, v := range secrets {
		add(v)
		if strings.ContainsAny(v, "\r\n") {
			for _, line := range strings.FieldsFunc(v, func(r rune) bool { return r == '\r' || r == '\n' }) {
				if line = strings.TrimSpace(line); len(line) >= minEncoded {
					add(line)
				}
			}
		}
		if len(v) < minEncoded {
			continue
		}
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			for _, f := range base64Fragments(enc, v) {
				add(f)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// base64Fragments are the characters of enc's encoding of v that v alone decides, at each of
// the three offsets (mod 3) v may start at in the encoded bytes: the characters shared with
// the bytes before or after v are left out.
func base64Fragments(enc *base64.Encoding, v string) []string {
	var out []string
	for k := range 3 {
		b := append(make([]byte, k), v...)
		e := enc.EncodeToString(b)
		skip := []int{0, 2, 3}[k] // characters that hold bits of the k bytes before v
		end := len(e)
		if len(b)%3 != 0 {
			end-- // the last character holds bits of the byte after v
		}
		if end-skip >= minEncoded {
			out = append(out, e[skip:end])
		}
	}
	return out
}

// logScrub writes a service's log with every secret form replaced by "***", up
// to max bytes. Call Close to write the last partial line.
type logScrub struct {
	w       io.Writer
	secrets []string // scrubForms, longest first
	longest int
	max     int64
	n       int64
	cut     bool
	buf     []byte
}

func newLogScrub(w io.Writer, secrets []string, max int64) *logScrub {
	l := &logScrub{w: w, secrets: scrubForms(secrets), max: max}
	if len(l.secrets) > 0 {
		l.longest = len(l.secrets[0])
	}
	return l
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
	if len(l.buf) > logChunk { // a line without end: written in pieces
		cut := l.safeCut()
		if err := l.line(l.buf[:cut]); err != nil {
			return 0, err
		}
		l.buf = append(l.buf[:0], l.buf[cut:]...)
	}
	return len(p), nil
}

// safeCut is where the held text may be split: before its last longest-1 bytes (where a secret
// may have only begun), and before any secret that the split would cut in two.
func (l *logScrub) safeCut() int {
	cut := len(l.buf) - max(l.longest-1, 0)
	if cut <= 0 { // a secret longer than a chunk: the whole, as before
		return len(l.buf)
	}
	for moved := true; moved; {
		moved = false
		for _, s := range l.secrets {
			lo := max(cut-len(s)+1, 0)
			if i := bytes.Index(l.buf[lo:min(cut+len(s)-1, len(l.buf))], []byte(s)); i >= 0 && lo+i < cut {
				cut, moved = lo+i, true
			}
		}
	}
	return cut
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

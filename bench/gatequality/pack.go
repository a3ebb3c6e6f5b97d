package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// packFile is a committed corpus beside its CONDITIONS.md: a header, each chunk's DONE and results.
const packFile = "corpus.jsonl.gz"

const packFormat = "loadgate-gate-quality-corpus/1"

// packLine is one line of the stream; exactly one of Format, Done and Result is set.
type packLine struct {
	Format string          `json:"format,omitempty"`
	Design string          `json:"design,omitempty"`
	Chunk  string          `json:"chunk,omitempty"`
	Side   string          `json:"side,omitempty"`
	Round  int             `json:"round,omitempty"`
	Done   json.RawMessage `json:"done,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
}

var chunkName = regexp.MustCompile(`^chunk-[0-9]+$`)

func packCorpus(src, dst string) error {
	cond, err := os.ReadFile(filepath.Join(src, "CONDITIONS.md"))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: no CONDITIONS.md: write where, when and beside what the corpus was recorded before packing it", src)
	}
	if err != nil {
		return err
	}
	dones, err := filepath.Glob(filepath.Join(src, "*", "chunk-*", "DONE"))
	if err != nil {
		return err
	}
	if len(dones) == 0 {
		return fmt.Errorf("%s: no kept chunk (no */chunk-*/DONE)", src)
	}
	sort.Strings(dones)
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	enc := json.NewEncoder(zw)
	if err := enc.Encode(packLine{Format: packFormat}); err != nil {
		return err
	}
	for _, doneFile := range dones {
		if err := packChunk(enc, doneFile); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dst, "CONDITIONS.md"), cond, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dst, packFile), buf.Bytes(), 0o644)
}

func packChunk(enc *json.Encoder, doneFile string) error {
	chunkDir := filepath.Dir(doneFile)
	chunk, design := filepath.Base(chunkDir), filepath.Base(filepath.Dir(chunkDir))
	d, b, err := readDone(doneFile)
	if err != nil {
		return err
	}
	if err := enc.Encode(packLine{Design: design, Chunk: chunk, Done: bytes.TrimSpace(b)}); err != nil {
		return err
	}
	for i := 1; i <= d.Rounds; i++ {
		for _, side := range []string{"base", "head"} {
			f := filepath.Join(chunkDir, side, fmt.Sprintf("round-%d", i), "result.json")
			b, err := os.ReadFile(f)
			if errors.Is(err, fs.ErrNotExist) && d.Exit == 3 {
				continue // an unusable gate stopped before this round
			}
			if err != nil {
				return err
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, b); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			if err := enc.Encode(packLine{Design: design, Chunk: chunk, Side: side, Round: i, Result: compact.Bytes()}); err != nil {
				return err
			}
		}
	}
	return nil
}

// readDone reads a chunk's DONE file, filling in a missing "started" from the file's time.
func readDone(doneFile string) (done, []byte, error) {
	var d done
	b, err := os.ReadFile(doneFile)
	if err != nil {
		return d, nil, err
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, nil, fmt.Errorf("%s: %w", doneFile, err)
	}
	if d.Started == 0 {
		fi, err := os.Stat(doneFile)
		if err != nil {
			return d, nil, err
		}
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		m["started"] = fi.ModTime().Unix() - int64(d.WallS)
		if b, err = json.Marshal(m); err != nil {
			return d, nil, err
		}
	}
	return d, b, nil
}

func unpackCorpus(dir, out string) error {
	name := filepath.Join(dir, packFile)
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		var l packLine
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return fmt.Errorf("%s line %d: %w", name, n, err)
		}
		if n == 1 {
			if l.Format != packFormat {
				return fmt.Errorf("%s line 1: format %q, want %q", name, l.Format, packFormat)
			}
			continue
		}
		if strings.ContainsAny(l.Design, `/\`) || l.Design == "" || l.Design == "." || l.Design == ".." || !chunkName.MatchString(l.Chunk) {
			return fmt.Errorf("%s line %d: design %q, chunk %q: want a name and chunk-<k>", name, n, l.Design, l.Chunk)
		}
		chunkDir := filepath.Join(out, l.Design, l.Chunk)
		var file string
		var body []byte
		switch {
		case l.Done != nil && l.Result == nil:
			file, body = filepath.Join(chunkDir, "DONE"), append(l.Done, '\n')
		case l.Result != nil && l.Done == nil && (l.Side == "base" || l.Side == "head") && l.Round >= 1:
			file, body = filepath.Join(chunkDir, l.Side, "round-"+strconv.Itoa(l.Round), "result.json"), l.Result
		default:
			return fmt.Errorf("%s line %d: want a chunk's done or a round's side, round and result", name, n)
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(file, body, 0o644); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: empty", name)
	}
	cond, err := os.ReadFile(filepath.Join(dir, "CONDITIONS.md"))
	if err != nil {
		return fmt.Errorf("%s: a committed corpus says where and when it was recorded: %w", dir, err)
	}
	return os.WriteFile(filepath.Join(out, "CONDITIONS.md"), cond, 0o644)
}

func committedCorpora(dir string) ([]string, error) {
	ms, err := filepath.Glob(filepath.Join(dir, "*", packFile))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range ms {
		out = append(out, filepath.Dir(m))
	}
	sort.Strings(out)
	return out, nil
}

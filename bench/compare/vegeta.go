package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// runVegeta runs one vegeta attack on the generator core, decoding after it exits (uncounted).
func (b *bench) runVegeta(ctx context.Context, rate int, dur time.Duration) run {
	r := run{Tool: "vegeta", Rate: rate, Duration: dur, Offered: offered(rate, dur), SpunS: -1}
	targets := filepath.Join(b.work, "vegeta-targets.txt")
	if err := os.WriteFile(targets, []byte("GET http://"+b.srv.Addr+"/\n"), 0o644); err != nil {
		r.Skipped = err.Error()
		return r
	}
	out := filepath.Join(b.work, fmt.Sprintf("vegeta-%d-%s.gob", rate, dur))
	defer os.Remove(out)
	bin, args := b.generatorArgv("vegeta", b.vegeta,
		"attack",
		"-rate="+strconv.Itoa(rate)+"/1s",
		"-duration="+dur.String(),
		"-workers="+strconv.Itoa(b.workers),
		"-max-workers="+strconv.Itoa(b.workers),
		"-timeout="+b.timeout.String(),
		"-targets="+targets,
		"-output="+out,
	)
	u, stderr, err := runPinned(ctx, b.genCPU, b.srv, dur+time.Minute, io.Discard, bin, args...)
	b.fillUsage(&r, u)
	if err == nil && u.ExitCode != 0 {
		err = fmt.Errorf("exit code %d", u.ExitCode)
	}
	if err != nil {
		r.Skipped = fmt.Sprintf("vegeta attack: %v: %s", err, tail(stderr, 3))
		return r
	}

	hits, errs, err := decodeVegeta(ctx, b.vegeta, out)
	if err != nil {
		r.Skipped = "vegeta encode: " + err.Error()
		return r
	}
	s := summarizeVegeta(hits, rate)
	r.Sent, r.Succeeded, r.Errors = s.Hits, s.OK, s.Hits-s.OK
	r.HeldRate = s.HeldRate
	r.LatenessN, r.LatenessP50, r.LatenessP99, r.LatenessMax = s.LatenessSamples, s.P50, s.P99, s.Max
	r.Late = s.Late
	if len(errs) > 0 {
		r.Note = append(r.Note, "errors: "+topErrors(errs, 3))
	}
	return r
}

func decodeVegeta(ctx context.Context, bin, file string) ([]vegetaHit, map[string]int64, error) {
	cmd := exec.CommandContext(ctx, bin, "encode", "--to", "csv", file)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	hits, errs, perr := parseVegetaCSV(pipe)
	if perr != nil {
		io.Copy(io.Discard, pipe)
	}
	if err := cmd.Wait(); err != nil {
		return nil, nil, fmt.Errorf("%v: %s", err, tail(stderr.String(), 3))
	}
	return hits, errs, perr
}

func parseVegetaCSV(rd io.Reader) ([]vegetaHit, map[string]int64, error) {
	cr := csv.NewReader(rd)
	cr.FieldsPerRecord = 12
	cr.ReuseRecord = true
	var hits []vegetaHit
	errs := map[string]int64{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return hits, errs, nil
		}
		if err != nil {
			return nil, nil, err
		}
		ts, err1 := strconv.ParseInt(rec[0], 10, 64)
		code, err2 := strconv.Atoi(rec[1])
		lat, err3 := strconv.ParseInt(rec[2], 10, 64)
		seq, err4 := strconv.ParseUint(rec[8], 10, 64)
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			return nil, nil, fmt.Errorf("record %d: %w", len(hits)+1, err)
		}
		ok := code >= 200 && code < 300 && rec[5] == ""
		if !ok {
			key := "status " + rec[1]
			if rec[5] != "" {
				key = shortErr(rec[5])
			}
			errs[key]++
		}
		hits = append(hits, vegetaHit{Seq: seq, TS: ts, Latency: lat, OK: ok})
	}
}

func shortErr(e string) string {
	if i := strings.LastIndex(e, ": "); i >= 0 {
		return e[i+2:]
	}
	return e
}

func topErrors(errs map[string]int64, n int) string {
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if errs[keys[i]] != errs[keys[j]] {
			return errs[keys[i]] > errs[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var parts []string
	for i, k := range keys {
		if i == n {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprintf("%s ×%d", k, errs[k]))
	}
	return strings.Join(parts, ", ")
}

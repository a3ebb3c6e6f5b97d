package stub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/internal/stackget"
)

// MaxConfigBytes bounds a stated configuration DecodeConfig reads.
const MaxConfigBytes = 64 << 10

// FetchTimeout bounds FetchConfig when ctx has no earlier deadline.
const FetchTimeout = 5 * time.Second

// ErrStated is wrapped by DecodeConfig's errors: the configuration is unreadable or invalid.
var ErrStated = errors.New("stub: stated configuration")

// FetchConfig GETs a stub's /stub/config from addr only (no proxy, no redirect).
func FetchConfig(ctx context.Context, addr string) (result.StubConfig, error) {
	page, err := stackget.Get(ctx, addr, PathConfig, stackget.Request{Accept: "application/json", MaxBytes: MaxConfigBytes, Timeout: FetchTimeout})
	var se *stackget.StatusError
	if errors.As(err, &se) {
		return result.StubConfig{}, fmt.Errorf("stub: %w (is it a loadgate stub?)", err)
	}
	if err != nil {
		return result.StubConfig{}, fmt.Errorf("stub: %w", err)
	}
	return DecodeConfig(bytes.NewReader(page.Body))
}

// DecodeConfig reads a stated configuration strictly and checks it as Validate does.
func DecodeConfig(r io.Reader) (result.StubConfig, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxConfigBytes+1))
	if err != nil {
		return result.StubConfig{}, fmt.Errorf("%w: %v", ErrStated, err)
	}
	if len(data) > MaxConfigBytes {
		return result.StubConfig{}, fmt.Errorf("%w: more than %d bytes", ErrStated, MaxConfigBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c result.StubConfig
	if err := dec.Decode(&c); err != nil {
		return result.StubConfig{}, fmt.Errorf("%w: %v", ErrStated, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return result.StubConfig{}, fmt.Errorf("%w: data after the object", ErrStated)
	}
	cfg, err := fromStated(c)
	if err != nil {
		return result.StubConfig{}, fmt.Errorf("%w: %v", ErrStated, err)
	}
	if err := cfg.Validate(); err != nil {
		return result.StubConfig{}, fmt.Errorf("%w: %v", ErrStated, err)
	}
	return c, nil
}

func fromStated(c result.StubConfig) (Config, error) {
	d, err := delayOf(c.Delay)
	if err != nil {
		return Config{}, fmt.Errorf("delay: %w", err)
	}
	if len(c.Routes) == 0 {
		return Config{}, errors.New("no routes")
	}
	cfg := Config{Delay: d, ErrorRate: c.ErrorRate, TimeoutRate: c.TimeoutRate, Seed: c.Seed, Routes: c.Routes, Body: c.Body}
	if cfg.HoldMax, err = dur(c.HoldMaxMS); err != nil || cfg.HoldMax <= 0 {
		return Config{}, fmt.Errorf("hold_max_ms %v is not a positive duration", c.HoldMaxMS)
	}
	if s := c.Stream; s != nil {
		first, err := delayOf(s.First)
		if err != nil {
			return Config{}, fmt.Errorf("stream.first_chunk: %w", err)
		}
		every, err := dur(s.ChunkEveryMS)
		if err != nil {
			return Config{}, fmt.Errorf("stream.chunk_every_ms: %w", err)
		}
		cfg.Stream = &Stream{Chunks: s.Chunks, First: first, Every: every}
	}
	return cfg, nil
}

func delayOf(s result.StubDelay) (Delay, error) {
	if s.CapMS != ms(MaxDelay) {
		return Delay{}, fmt.Errorf("cap_ms %v is not this loadgate's %v", s.CapMS, ms(MaxDelay))
	}
	var d Delay
	var err error
	set := func(dst *time.Duration, v float64) {
		if err == nil {
			*dst, err = dur(v)
		}
	}
	zero := func(vs ...float64) {
		for _, v := range vs {
			if err == nil && v != 0 {
				err = fmt.Errorf("a %s delay takes no other parameter", s.Dist)
			}
		}
	}
	switch d.Dist = s.Dist; s.Dist {
	case "fixed":
		set(&d.Fixed, s.MS)
		zero(s.MinMS, s.MaxMS, s.P50MS, s.P99MS)
	case "uniform":
		set(&d.Min, s.MinMS)
		set(&d.Max, s.MaxMS)
		zero(s.MS, s.P50MS, s.P99MS)
	case "lognormal":
		set(&d.P50, s.P50MS)
		set(&d.P99, s.P99MS)
		zero(s.MS, s.MinMS, s.MaxMS)
	default:
		return Delay{}, fmt.Errorf("unknown distribution %q", clip(s.Dist))
	}
	return d, err
}

// dur is a stated millisecond value as a duration within [0, MaxHold].
func dur(v float64) (time.Duration, error) {
	if math.IsNaN(v) || v < 0 || v > ms(MaxHold) {
		return 0, fmt.Errorf("%v ms is outside [0, %v]", v, ms(MaxHold))
	}
	return time.Duration(v * float64(time.Millisecond)), nil
}

// Healthcheck GETs url within 2 s, nil on a 200: the stub image's own healthcheck (it has no
// shell or curl).
func Healthcheck(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d", url, resp.StatusCode)
	}
	return nil
}

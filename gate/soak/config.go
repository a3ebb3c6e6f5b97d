package soak

import (
	"fmt"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/session"
)

// Options are a soak's flags, as given.
type Options struct {
	Scenario string        // the scenario file
	Duration time.Duration // how long the load is held after the warm-up
	Leak     string        // the leak threshold: a size per hour ("32MiB", "32MiB/h")
	Limits   scenario.OperatorLimits
	Every    time.Duration // the samplers' interval
}

// NewConfig is the soak o asks for; every refusal, faults first, is session.ErrUsage.
func NewConfig(o Options) (Config, error) {
	switch {
	case o.Scenario == "":
		return Config{}, session.Usagef("soak: --scenario is required (see loadgate soak -h)")
	case o.Duration <= 0:
		return Config{}, session.Usagef("soak: --duration is required and must be positive (e.g. 2h)")
	}
	threshold, err := ParseLeakThreshold(o.Leak)
	if err != nil {
		return Config{}, session.Usagef("soak: --leak-threshold: %w", err)
	}
	base, err := scenario.Load(o.Scenario, scenario.Options{})
	if err != nil {
		return Config{}, session.Usage(err)
	}
	if err := refuseFaults(base); err != nil {
		return Config{}, err
	}
	sc, err := Scenario(base, o.Duration)
	if err == nil {
		err = sc.CheckOperatorLimits(o.Limits)
	}
	if err != nil {
		return Config{}, session.Usagef("soak: %w", err)
	}
	return Config{Base: base, Scenario: sc, Duration: o.Duration, ThresholdBytesPerHour: threshold, Every: o.Every}, nil
}

// refuseFaults refuses faults, which would read as memory growth.
func refuseFaults(sc *scenario.Scenario) error {
	if !sc.HasFaults() {
		return nil
	}
	for _, p := range sc.Phases {
		if len(p.Inject) > 0 {
			return session.Usagef("soak: %s:%d: phase %s injects faults (inject:): a soak holds one steady load; run faults with loadgate run", sc.File, p.Line, p.Name)
		}
	}
	return session.Usagef("soak: %s: the scenario injects faults: a soak holds one steady load; run faults with loadgate run", sc.File)
}

// ParseLeakThreshold reads a byte size per hour: "32MiB", "32MiB/h", "1GiB".
func ParseLeakThreshold(s string) (float64, error) {
	v, ok := scenario.ParseBytes(strings.TrimSuffix(strings.TrimSpace(s), "/h"))
	if !ok || v <= 0 {
		return 0, fmt.Errorf("%q is not a positive size per hour such as 32MiB or 32MiB/h", s)
	}
	return float64(v), nil
}

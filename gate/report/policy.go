package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
)

// PolicyText words a change head makes to a scenario's bars: "head changes p95
// threshold of api_read 300 ms → 2 000 ms".
func PolicyText(c verdict.PolicyChange) string {
	change := func(what string, b, h string) string {
		return fmt.Sprintf("head changes %s %s → %s", what, b, h)
	}
	switch c.Kind {
	case verdict.PolicyWorkloadAdded:
		return "head adds workload " + c.Workload
	case verdict.PolicyWorkloadRemoved:
		return "head removes workload " + c.Workload
	case verdict.PolicyLatency, verdict.PolicySession:
		return change(c.Field+" threshold of "+c.Workload, policyLimit(c.Base), policyLimit(c.Head))
	case verdict.PolicyErrorRate:
		return change("error_rate threshold of "+c.Workload, policyRate(c.Base), policyRate(c.Head))
	case verdict.PolicyCount:
		what := "count of " + c.Workload
		if c.Workload == "" {
			what = "count (every workload)"
		}
		return change(what, policyCounter(c.Base), policyCounter(c.Head))
	case verdict.PolicyInject:
		return change("inject of phase "+c.Phase, policyFaults(c.Base), policyFaults(c.Head))
	case verdict.PolicyRecovery:
		return change("recovery of phase "+c.Phase, policyTargets(c.Base), policyTargets(c.Head))
	case verdict.PolicyRecoveryTarget:
		what := "recovery target of phase " + c.Phase
		switch c.Field {
		case "within":
			return change(what+" within", c.Base.Duration.String(), c.Head.Duration.String())
		case "error_rate":
			return change(what+" error_rate", policyRate(c.Base), policyRate(c.Head))
		}
		return change(c.Field+" "+what, policyLimit(c.Base), policyLimit(c.Head))
	case verdict.PolicyCeiling:
		what := "ceilings." + c.Field
		switch c.Field {
		case "rate":
			return change(what, Rate(c.Base.ReqPerS), Rate(c.Head.ReqPerS)+" req/s")
		case "duration":
			return change(what, c.Base.Duration.String(), c.Head.Duration.String())
		case "in_flight":
			return change(what, Count(c.Base.N), Count(c.Head.N))
		case "timeout", "drain":
			return change(what, policyMS(c.Base.Duration), policyMS(c.Head.Duration))
		case "max_body":
			return change(what, scenario.FormatBytes(c.Base.Bytes), scenario.FormatBytes(c.Head.Bytes))
		}
		return "head changes " + what
	case verdict.PolicyTolerance:
		return change("tolerance", policyTolerance(c.Base), policyTolerance(c.Head))
	case verdict.PolicyToleranceFloor:
		return change("tolerance_floor", policyFloor(c.Base), policyFloor(c.Head))
	case verdict.PolicyLoad:
		return fmt.Sprintf("head changes the load (scenario hash %s → %s)", result.ShortHash(c.Base.Hash), result.ShortHash(c.Head.Hash))
	}
	// A kind this version does not know.
	parts := []string{"head changes", string(c.Kind)}
	for _, p := range []string{c.Field, c.Workload, c.Phase} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " ")
}

func policyTolerance(v verdict.PolicyValue) string {
	if v.None {
		return "none (10%)"
	}
	return Percent(v.Fraction)
}

func policyFloor(v verdict.PolicyValue) string {
	if v.None {
		return "none (" + verdict.DefaultToleranceFloor.String() + ")"
	}
	return v.Duration.String()
}

// OperatorLooserText words an operator's bar that base's scenario kept from loosening it.
func OperatorLooserText(c verdict.PolicyChange) string {
	if c.Kind == verdict.PolicyToleranceFloor {
		return fmt.Sprintf("the operator's tolerance floor %s is looser than base's scenario's %s: not applied (a flag or input can only tighten it)", policyFloor(c.Head), policyFloor(c.Base))
	}
	return fmt.Sprintf("the operator's tolerance %s is looser than base's scenario's %s: not applied (a flag or input can only tighten it)", policyTolerance(c.Head), policyTolerance(c.Base))
}

// policyNoteText words a policy note's change, or its Detail for an older note.
func policyNoteText(n verdict.Note) string {
	if n.Policy == nil {
		return n.Detail
	}
	return PolicyText(*n.Policy)
}

// WorkflowChangeText words how head changes a workflow file (err: not compared).
func WorkflowChangeText(path string, how verdict.WorkflowHow, err string) string {
	switch how {
	case verdict.WorkflowUnreadable:
		return fmt.Sprintf("head may change %s (loadgate cannot compare it: %s)", path, err)
	case verdict.WorkflowOutsideGate:
		return fmt.Sprintf("head changes %s outside the loadgate job's steps up to the gate", path)
	}
	return fmt.Sprintf("head %s %s", how, path)
}

func workflowNoteText(n verdict.Note) string {
	if n.How == "" {
		return fmt.Sprintf("head %s %s", n.Detail, n.Path)
	}
	return WorkflowChangeText(n.Path, n.How, n.Detail)
}

func policyMS(d time.Duration) string {
	return MS(float64(d)/float64(time.Millisecond)) + " ms"
}

func policyLimit(v verdict.PolicyValue) string {
	if v.None {
		return "none"
	}
	return policyMS(v.Duration)
}

func policyRate(v verdict.PolicyValue) string {
	if v.None {
		return "none"
	}
	return Percent(v.Fraction)
}

func policyCounter(v verdict.PolicyValue) string {
	c := v.Count
	if v.None || c == nil {
		return "none"
	}
	return fmt.Sprintf("%s on %s:%d%s", c.Metric, c.Service, c.Port, c.Path)
}

func policyFaults(v verdict.PolicyValue) string {
	if v.None || len(v.Faults) == 0 {
		return "none"
	}
	parts := make([]string, len(v.Faults))
	for i, f := range v.Faults {
		parts[i] = fmt.Sprintf("%s %s at %v for %v", f.Action, f.Service, f.At, f.For)
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

func policyTargets(v verdict.PolicyValue) string {
	r := v.Recovery
	if v.None || r == nil {
		return "none"
	}
	parts := []string{"within " + r.Within.String()}
	if r.ErrorRate >= 0 {
		parts = append(parts, "error_rate "+Percent(r.ErrorRate))
	}
	for _, p := range []struct {
		name string
		d    time.Duration
	}{{"p50", r.P50}, {"p90", r.P90}, {"p95", r.P95}, {"p99", r.P99}, {"p999", r.P999}} {
		if p.d != 0 {
			parts = append(parts, p.name+" "+policyMS(p.d))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

package rounds

import "github.com/loadgate/loadgate/gate/verdict"

// UnusableVerdict is the verdict of a gate that could not judge: value
// unusable, no workloads, the reasons why.
func UnusableVerdict(reasons ...string) verdict.Verdict {
	return verdict.Verdict{Value: verdict.Unusable, Workloads: []verdict.WorkloadVerdict{}, Reasons: reasons}
}

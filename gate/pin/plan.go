package pin

import (
	"fmt"
	"strings"
)

// Plan is the stack's and the load generator's CPU sets for one process.
type Plan struct {
	Stack, Load Set
	Overlap     bool // the sets share a CPU (allowed by the caller)
}

// NewPlan splits this process's CPUs unless the cpu lists say otherwise, refusing overlap
// unless allowOverlap (errors name the flag). Call it once per process: after pinning, its
// CPUs are the load set only.
func NewPlan(stackList, loadList string, allowOverlap bool) (Plan, error) {
	all, err := Available()
	if err != nil {
		return Plan{}, fmt.Errorf("reading this process's CPUs: %w", err)
	}
	stack, load := Split(all)
	if stackList != "" {
		if stack, err = Parse(stackList); err != nil {
			return Plan{}, fmt.Errorf("--stack-cpus %q: %w", stackList, err)
		}
	}
	if loadList != "" {
		if load, err = Parse(loadList); err != nil {
			return Plan{}, fmt.Errorf("--load-cpus %q: %w", loadList, err)
		}
	}
	if !load.SubsetOf(all) {
		return Plan{}, fmt.Errorf("--load-cpus %s: not all of them are available to this process (%s)", load, all)
	}
	p := Plan{Stack: stack, Load: load, Overlap: Overlaps(stack, load)}
	if p.Overlap && !allowOverlap {
		return p, fmt.Errorf("the stack's cpus %s and the generator's %s overlap: they would compete and the numbers would describe neither; choose disjoint sets or pass --allow-overlap", stack, load)
	}
	return p, nil
}

// Topology says whether the run was pinned as planned, and if not why.
func (p Plan) Topology(stackPinned bool, stackReason string) (pinned bool, reason string) {
	genPinned, genReason := Generator(p.Load)
	var why []string
	if stackReason != "" {
		why = append(why, "stack: "+stackReason)
	}
	if !genPinned {
		why = append(why, genReason)
	}
	if p.Overlap {
		why = append(why, fmt.Sprintf("stack cpus %s and load cpus %s overlap (--allow-overlap)", p.Stack, p.Load))
	}
	return stackPinned && genPinned && !p.Overlap, strings.Join(why, "; ")
}

// Generator says whether every thread's affinity reads back as want, and why.
func Generator(want Set) (bool, string) {
	if want.Empty() {
		return false, "plain run mode without --load-cpus: the generator is not pinned and no stack was started"
	}
	threads, err := ThreadSets()
	if err != nil {
		return false, fmt.Sprintf("could not read the generator's affinity back: %v", err)
	}
	for tid, got := range threads {
		if !got.Equal(want) {
			return false, fmt.Sprintf("generator thread %d runs on cpus %s, not %s", tid, got, want)
		}
	}
	return true, fmt.Sprintf("generator pinned to cpus %s (all %d threads read back); no stack in plain run mode", want, len(threads))
}

// Package layout states which pipeline stage each package of loadgate sits in:
// a package imports only its own stage or below (TestNoImportUpward checks).
package layout

// Stages lists the packages (paths without the module prefix) by stage, lowest first.
var Stages = [][]string{
	// 0 data and leaves: what everything reads.
	{"internal/cliflag", "internal/ctxwait", "internal/mdtext", "internal/outfile", "internal/promtext", "internal/strictjson", "internal/sandbox",
		"internal/stackget", "internal/testtier", "gate/procstat", "gate/pin", "gate/result", "gate/scenario"},
	// 1 measure: the engine, the stack and what runs beside a load.
	{"gate/load", "compose", "gate/stub", "gate/counted", "gate/fault"},
	// 2 judge: numbers and reason codes, no words.
	{"gate/verdict"},
	// 3 one measured run, shared by every command that loads.
	{"gate/session"},
	// 4 orchestrate runs: the gate's rounds, the sweep, the soak, history, bisection.
	{"gate/rounds", "gate/sweep", "gate/soak", "gate/history", "gate/bisect"},
	// 5 words: every format and rendering.
	{"gate/report"},
	// 6 surfaces: the Action and stored baselines.
	{"gate/action", "gate/baseline"},
	// 7 programs and test helpers.
	{"cmd/loadgate", "internal/actrunner", "internal/enginetest", "internal/githubfake", "internal/layout", "examples/demo", "examples/demo/service",
		"bench/compare", "bench/server", "bench/wakeups", "bench/gatequality", "bench/render"},
}

// Stage is the stage of pkg and whether Stages places it.
func Stage(pkg string) (int, bool) {
	for i, s := range Stages {
		for _, p := range s {
			if p == pkg {
				return i, true
			}
		}
	}
	return 0, false
}

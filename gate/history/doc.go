// Package history keeps a protected branch's load history: one Entry per
// commit (compact results and, where a paired gate against the previous
// entry ran, its per-workload ratios), the chain those ratios make (the
// cumulative change since an earlier entry, judged against a cumulative
// tolerance), change points, and storage on a git data branch. It chains
// paired ratios, not absolute numbers, because runners differ more than
// most changes do; each link was measured base against head on one runner.
//
// The data branch is never written from a pull request (a change must not
// write the history it is judged against); the caller decides, writing
// only on a push to a protected branch.
package history

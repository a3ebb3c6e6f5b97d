// Package history keeps a protected branch's load history: one Entry per
// commit (its compact results and, where a paired gate against the previous
// entry ran, that gate's per-workload ratios), the chain those ratios make
// (the cumulative change since any earlier entry, with its interval, judged
// against a cumulative tolerance), change points over it, and the entries'
// storage on a git data branch.
//
// Absolute numbers of different runners differ by 30% and more with no code
// change, so a trend of absolute percentiles mostly plots the machines. The
// chain of paired ratios does not: each link was measured base against head
// on one runner, in paired rounds.
//
// The data branch is never written from a pull request: a change under
// review must not write the history it will be judged against. This package
// does not know the event; the caller (the Action, the CLI) decides, and
// writes only on a push to a protected branch, with contents: write in that
// job alone.
package history

// Package history keeps a protected branch's load history on a git data
// branch: one Entry per commit, the chain of paired gates' ratios (the
// cumulative change, judged against a cumulative tolerance) and change
// points. It chains paired ratios, not absolute numbers, because runners
// differ more than most changes do. Never write it from a pull request: a
// change must not write the history it is judged against.
package history

// Package history keeps a protected branch's load history on a git data branch: one Entry
// per commit, chained by paired gates' ratios, since runners differ more than most changes.
// Never write it from a pull request: a change must not write the history judging it.
package history

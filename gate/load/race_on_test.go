//go:build race

package load

// raceEnabled: the race detector is on. sync.Pool drops some of what is
// put back under it on purpose, so allocation counts do not hold.
const raceEnabled = true

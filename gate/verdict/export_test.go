package verdict

// Exported for the tests of package verdict_test.
var (
	NormQuantile = normQuantile
	TQuantile    = tQuantile
	TCDF         = tCDF
	BetaInc      = betaInc
	Wilson       = wilson
	Newcombe     = newcombe
)

// SeqBound is seqBound, for the boundaries' table test.
var SeqBound = seqBound

// SeqBounds is seqBounds, for the recursion's tests.
var SeqBounds = seqBounds

// StallsOfCells is the stalled-round rule on log ratios cells[k][i]
// (cell k, round i), without the sides' own figures: the simulation's.
func StallsOfCells(cells [][]float64) []Stall { return stallsOf(cells, nil, nil) }

// CheckLateness is checkLateness, for its table test.
var CheckLateness = checkLateness

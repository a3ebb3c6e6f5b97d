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

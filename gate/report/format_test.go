package report

import "testing"

func TestNumberFormats(t *testing.T) {
	const s = GroupSep
	for _, tc := range []struct{ got, want string }{
		{MS(0.412), "0.412"}, {MS(0.04123), "0.0412"}, {MS(12.34), "12.3"}, {MS(312.4), "312"},
		{MS(1520), "1" + s + "520"}, {MS(1524.9), "1" + s + "520"}, {MS(9.996), "10.0"}, {MS(999.6), "1" + s + "000"},
		{MS(123456), "123" + s + "000"}, {MS(0), "0"}, {MS(12), "12.0"},
		{Count(0), "0"}, {Count(999), "999"}, {Count(2811), "2" + s + "811"}, {Count(1234567), "1" + s + "234" + s + "567"},
		{Count(-1070), "−1" + s + "070"},
		{rate(12), "12.0"}, {rate(1234.56), "1" + s + "234.6"},
		{Percent(0), "0%"}, {Percent(0.001), "0.1%"}, {Percent(0.000355), "0.0355%"}, {Percent(1), "100%"}, {Percent(0.0324074), "3.24%"},
		{SignedPercent(1.312), "+31.2%"}, {SignedPercent(0.868), "−13.2%"}, {SignedPercent(1.0004), "+0.0%"}, {SignedPercent(12), "+1" + s + "100.0%"},
		{SignedPoints(0.0007), "+0.07"}, {SignedPoints(-0.0032), "−0.32"}, {SignedPoints(0), "+0.00"},
		{exact(300), "300"}, {exact(0.5), "0.5"}, {exact(5000), "5" + s + "000"},
		{seconds(60), "60 s"}, {seconds(1.5), "1.5 s"}, {seconds(180), "180 s"}, {seconds(0), "0 s"},
		{scenarioHash(""), "(no hash)"}, {commitText(""), "unknown"},
		{ranges([]int{1, 2, 3, 5, 7, 8}), "1–3, 5, 7, 8"}, {ranges([]int{4}), "4"},
		{factor(1.5), "1.5"}, {factor(14), "14"},
		{classes(map[string]int64{"status 503": 2, "timeout": 3, "reset": 2, "none": 0}), "timeout 3, reset 2, status 503 2"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// A grouped number is as many characters wide as its digits and
// separators, so a tabwriter (which counts runes) keeps columns aligned.
func TestGroupedColumnsAlign(t *testing.T) {
	var b txt
	b.table("", [][]string{{"n", "m"}, {Count(1070), Count(1070)}, {Count(9), Count(2)}})
	want := "n      m\n1\u2009070  1\u2009070\n9      2\n"
	if b.String() != want {
		t.Errorf("table\n%q\nwant\n%q", b.String(), want)
	}
}

// A sequential gate's first look printed "100% CI": its confidence is
// 99.99…%, and Percent rounds to three significant digits.
func TestRegression_ConfidenceReads100Percent(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0.95, "95%"},
		{0.999, "99.9%"},
		{0.999937, "99.993%"},
		{0.9999999, "99.999%"},
		{1, "100%"},
	} {
		if got := Confidence(tc.in); got != tc.want {
			t.Errorf("Confidence(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

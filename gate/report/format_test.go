package report

import "testing"

func TestNumberFormats(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{ms(0.412), "0.412"}, {ms(0.04123), "0.0412"}, {ms(12.34), "12.3"}, {ms(312.4), "312"},
		{ms(1520), "1 520"}, {ms(1524.9), "1 520"}, {ms(9.996), "10.0"}, {ms(999.6), "1 000"},
		{ms(123456), "123 000"}, {ms(0), "0"}, {ms(12), "12.0"},
		{count(0), "0"}, {count(999), "999"}, {count(2811), "2 811"}, {count(1234567), "1 234 567"},
		{rate(12), "12.0"}, {rate(1234.56), "1 234.6"},
		{pct(0), "0%"}, {pct(0.001), "0.1%"}, {pct(0.000355), "0.0355%"}, {pct(1), "100%"}, {pct(0.0324074), "3.24%"},
		{exact(300), "300"}, {exact(0.5), "0.5"}, {exact(5000), "5 000"},
		{seconds(60), "60 s"}, {seconds(1.5), "1.5 s"}, {seconds(180), "180 s"}, {seconds(0), "0 s"},
		{shortHash("sha256:9f86d081884c7d659a2f"), "sha256:9f86d081884c"}, {shortHash("abc"), "abc"},
		{classes(map[string]int64{"status 503": 2, "timeout": 3, "reset": 2, "none": 0}), "timeout 3, reset 2, status 503 2"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

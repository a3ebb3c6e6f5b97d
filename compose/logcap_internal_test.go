package compose

import (
	"bytes"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
)

// Regression: every line of every container's log went into the results
// artifact, uncapped, with a ${SECRET} the service logged in clear.
func TestSavedLogIsScrubbedAndCapped(t *testing.T) {
	var out bytes.Buffer
	w := newLogScrub(&out, []string{"s3cr3t-fakeToken", "ab"}, 100)
	w.Write([]byte("GET /x Authorization: Bearer s3cr3t-"))
	w.Write([]byte("fakeToken\nabc\n"))
	for range 10 {
		w.Write([]byte("0123456789\n"))
	}
	w.Write([]byte("tail without newline s3cr3t-fakeToken"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.Contains(got, "s3cr3t-fakeToken") {
		t.Errorf("secret in the log:\n%s", got)
	}
	if !strings.Contains(got, "Bearer ***\n") || !strings.Contains(got, "abc\n") {
		t.Errorf("scrubbed wrongly (a value under 3 characters is kept):\n%s", got)
	}
	if !strings.HasSuffix(got, "[loadgate: log cut at 0 MiB]\n") || len(got) > 140 {
		t.Errorf("not cut at 100 bytes (%d):\n%s", len(got), got)
	}
}

// scrubbed writes pieces through a scrub of secrets and returns what it saved.
func scrubbed(t *testing.T, secrets []string, pieces ...string) string {
	t.Helper()
	var out bytes.Buffer
	w := newLogScrub(&out, secrets, MaxLogBytes)
	for _, p := range pieces {
		if _, err := w.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

const fakeToken = "ghp_R4nd0mT0k3nV4lu3xyzABCDEF0123456789"

// Regression (issue 46): a line without end is saved in 64 KiB pieces, and a secret split
// between two pieces was saved in clear, half in each.
func TestRegression_ScrubMissesSecretSplitAtChunk(t *testing.T) {
	for _, h := range []int{1, len(fakeToken) / 2, len(fakeToken) - 1} {
		// The engine's stream gives a line longer than a chunk, the read ending inside the secret.
		head := strings.Repeat("x", logChunk+1-h)
		got := scrubbed(t, []string{fakeToken}, head+fakeToken[:h], fakeToken[h:]+strings.Repeat("y", 100), "\n")
		if strings.Contains(got, fakeToken[:max(h, 4)]) || strings.Contains(got, fakeToken[h:]) {
			t.Errorf("split %d bytes into the secret: a part of it saved in clear", h)
		}
		if want := head + "***" + strings.Repeat("y", 100) + "\n"; got != want {
			t.Errorf("split %d bytes into the secret: saved %d bytes, want %d (the rest unchanged)", h, len(got), len(want))
		}
	}
	// And two secrets, one inside the held tail, one straddling where the tail begins.
	short := "pw-0123456789"
	line := strings.Repeat("x", logChunk-len(fakeToken)+5) + short + fakeToken + strings.Repeat("y", 10)
	if got := scrubbed(t, []string{fakeToken, short}, line[:logChunk+1], line[logChunk+1:]); got != strings.Repeat("x", logChunk-len(fakeToken)+5)+"******"+strings.Repeat("y", 10) {
		t.Errorf("two secrets at the chunk's end: %q", got[logChunk-len(fakeToken):])
	}
}

// Regression (issue 46): a secret logged base64-encoded (a Basic authorization header, a
// JSON web fakeToken's payload, a URL-safe cookie) was saved in clear: every alignment of it in
// the standard and URL alphabets, padded or not, is scrubbed.
func TestRegression_ScrubMissesBase64Secret(t *testing.T) {
	secret := "s3cr3t?>>~" + fakeToken // bytes whose std and URL encodings differ
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		for _, prefix := range []string{"", "u:", "user:", "a", "ab"} {
			for _, suffix := range []string{"", "!", "!?", "\x00\x01\x02"} {
				encoded := enc.EncodeToString([]byte(prefix + secret + suffix))
				got := scrubbed(t, []string{secret}, "Authorization: Basic "+encoded+"\n")
				// The form decides nothing alone: what is left must not decode to the secret's middle.
				if strings.Contains(got, encoded) || !strings.Contains(got, "***") {
					t.Errorf("%q+secret+%q encoded %s saved in clear: %s", prefix, suffix, encoded, got)
				}
			}
		}
	}
	// A value too short to be worth its encoded forms' false matches keeps them.
	if got := scrubbed(t, []string{"abcdefg"}, "YWJjZGVmZw==\n"); got != "YWJjZGVmZw==\n" {
		t.Errorf("a 7-byte value's base64 was scrubbed: %q", got)
	}
}

// Regression (issue 46): only the scenario's ${ENV} values were scrubbed; the job's own
// secrets, which GitHub gives the action as environment variables (and its inputs as
// INPUT_*), were saved in clear when a service logged them.
func TestRegression_ScrubMissesJobEnvironmentSecret(t *testing.T) {
	env := []string{
		"INPUT_TOKEN=ghs_inputTokenValue01", "INPUT_GITHUB-TOKEN=ghs_inputTokenValue02",
		"NPM_PAT=npm_patValue0000003", "DATABASE_PASSWORD=hunter2hunter2", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG",
		"STRIPE_API_KEY=sk_live_000000004", "SIGNING_KEY=-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEF\n-----END KEY-----",
		"PATH=/usr/local/bin:/usr/bin", "HOME=/home/runner", "PWD=/home/runner/work", "GITHUB_SHA=0123456789abcdef",
		"ACTIONS_CACHE_SERVICE_V2=True", "KEYBOARD_LAYOUT=en-us-intl", "GIT_AUTHOR_NAME=Jane Doe Smith",
	}
	secrets := logSecrets([]string{"scenario-value"}, env)
	log := strings.Join(env, "\n") + "\nscenario-value\n"
	got := scrubbed(t, secrets, log)
	for _, leaked := range []string{"ghs_inputTokenValue01", "ghs_inputTokenValue02", "npm_patValue0000003", "hunter2hunter2",
		"wJalrXUtnFEMI/K7MDENG", "sk_live_000000004", "MIIEvQIBADANBgkqhkiG9w0BAQEF", "scenario-value"} {
		if strings.Contains(got, leaked) {
			t.Errorf("%s saved in clear", leaked)
		}
	}
	for _, kept := range []string{"/usr/local/bin:/usr/bin", "/home/runner/work", "0123456789abcdef", "True", "en-us-intl", "Jane Doe Smith"} {
		if !strings.Contains(got, kept) {
			t.Errorf("%s, not a secret, was scrubbed:\n%s", kept, got)
		}
	}
	// Up scrubs the job's environment now and as the process started: the runner's
	// credentials, which the gate unsets before any stack comes up, are in the latter.
	defer func(env []string) { jobEnv = env }(jobEnv)
	jobEnv = append(slices.Clone(jobEnv), "GITHUB_TOKEN=ghs_unsetSinceStart0001")
	t.Setenv("LOADGATE_TEST_API_TOKEN", "set-after-start-0002")
	up := upSecrets([]string{"scenario-value"})
	for _, want := range []string{"ghs_unsetSinceStart0001", "set-after-start-0002", "scenario-value"} {
		if !slices.Contains(up, want) {
			t.Errorf("Up does not scrub %s", want)
		}
	}
}

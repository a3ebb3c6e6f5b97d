package action_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loadgate/loadgate/gate/action"
)

// FuzzReadManifest: the fork workflow's manifest is untrusted (the pull
// request's code wrote it). No manifest panics ReadManifest, and one it
// accepts has the schema, a non-negative pull request number and a report
// inside the results directory.
func FuzzReadManifest(f *testing.F) {
	f.Add([]byte(`{"schema":"loadgate/github/v1","scenario":"demo-api","pr":2,"head_sha":"ec26c3e57ca3a959ca5aad62de7213c562f8c821","verdict":"pass","exit_code":0,"report":"report.md","run_id":4242}`))
	f.Add([]byte(`{"schema":"loadgate/github/v1","scenario":"demo-api","verdict":"regression","report":"../report.md"}`))
	f.Add([]byte(`{"schema":"loadgate/github/v1","scenario":"demo-api","verdict":"pass","pr":-1,"report":"report.md"}`))
	f.Add([]byte(`{"schema":"loadgate/github/v0"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, manifest []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, action.ManifestFile), manifest, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte("# loadgate\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		m, md, err := action.ReadManifest(dir)
		if err != nil {
			return
		}
		if m.Schema != action.ManifestSchema || m.PR < 0 || !filepath.IsLocal(filepath.FromSlash(m.Report)) {
			t.Fatalf("accepted %q as %+v", manifest, m)
		}
		if m.Report == "report.md" && md != "# loadgate\n" {
			t.Fatalf("report %q read as %q", m.Report, md)
		}
	})
}

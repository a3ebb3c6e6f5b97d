package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, name, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// collected is a corpus as collect.sh leaves it: one design, a kept
// chunk of two rounds and an unusable one (exit 3) stopped after round 1,
// a chunk that was not kept (no DONE), and files a gate writes beside
// result.json.
func collected(t *testing.T) string {
	src := t.TempDir()
	writeFile(t, filepath.Join(src, "CONDITIONS.md"), "Recorded here, today.\n")
	c1 := filepath.Join(src, "duet20", "chunk-1")
	writeFile(t, filepath.Join(c1, "DONE"), `{"design":"duet20","scenario":"s.yaml","rounds":2,"flags":"--duet","exit":0,"wall_s":90,"started":1764900000}`+"\n")
	c2 := filepath.Join(src, "duet20", "chunk-2")
	writeFile(t, filepath.Join(c2, "DONE"), `{"design":"duet20","scenario":"s.yaml","rounds":2,"flags":"--duet","exit":3,"wall_s":60,"started":1764900100}`+"\n")
	for _, side := range []string{"base", "head"} {
		for i, c := range []string{c1, c1, c2} {
			round := []string{"round-1", "round-2", "round-1"}[i]
			writeFile(t, filepath.Join(c, side, round, "result.json"), "{\n  \"side\": \""+side+"\",\n  \"round\": "+round[6:]+"\n}\n")
			writeFile(t, filepath.Join(c, side, round, "stats.jsonl"), "{}\n")
		}
	}
	writeFile(t, filepath.Join(src, "duet20", "chunk-3", "base", "round-1", "result.json"), "{}")
	return src
}

// A packed corpus unpacks to the tree it came from: the kept chunks'
// DONE and result.json (compacted), CONDITIONS.md; not the gate's other
// files, nor a chunk that was not kept.
func TestPackUnpack(t *testing.T) {
	src := collected(t)
	dst := filepath.Join(t.TempDir(), "2026-12-05")
	if err := packCorpus(src, dst); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := unpackCorpus(dst, out); err != nil {
		t.Fatal(err)
	}
	var got []string
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(out, p)
			got = append(got, rel)
		}
		return nil
	})
	want := []string{"CONDITIONS.md",
		"duet20/chunk-1/DONE", "duet20/chunk-1/base/round-1/result.json", "duet20/chunk-1/base/round-2/result.json",
		"duet20/chunk-1/head/round-1/result.json", "duet20/chunk-1/head/round-2/result.json",
		"duet20/chunk-2/DONE", "duet20/chunk-2/base/round-1/result.json", "duet20/chunk-2/head/round-1/result.json"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("unpacked:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range want {
		a, _ := os.ReadFile(filepath.Join(src, f))
		b, _ := os.ReadFile(filepath.Join(out, f))
		var ca bytes.Buffer
		if strings.HasSuffix(f, ".json") {
			if err := json.Compact(&ca, a); err != nil {
				t.Fatal(err)
			}
			a = ca.Bytes()
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: unpacked %q, collected %q", f, b, a)
		}
	}
	dirs, err := committedCorpora(filepath.Dir(dst))
	if err != nil || len(dirs) != 1 || dirs[0] != dst {
		t.Errorf("committed corpora %v (%v), want [%s]", dirs, err, dst)
	}
}

func TestPackRefusesWithoutConditions(t *testing.T) {
	src := collected(t)
	os.Remove(filepath.Join(src, "CONDITIONS.md"))
	err := packCorpus(src, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "CONDITIONS.md") {
		t.Fatalf("err %v, want one asking for CONDITIONS.md", err)
	}
}

// A malformed stream is refused, naming its line; a name that would
// leave the directory is one.
func TestUnpackRefusesMalformed(t *testing.T) {
	for _, tc := range []struct{ name, lines, want string }{
		{"format", `{"format":"other/1"}`, "line 1: format"},
		{"escape", `{"format":"` + packFormat + `"}` + "\n" + `{"design":"..","chunk":"chunk-1","done":{}}`, "line 2: design"},
		{"chunk", `{"format":"` + packFormat + `"}` + "\n" + `{"design":"d","chunk":"../x","done":{}}`, "line 2: design"},
		{"both", `{"format":"` + packFormat + `"}` + "\n" + `{"design":"d","chunk":"chunk-1","side":"base","round":1,"done":{},"result":{}}`, "line 2: want"},
		{"unknown field", `{"format":"` + packFormat + `"}` + "\n" + `{"design":"d","chunk":"chunk-1","extra":1}`, "line 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write([]byte(tc.lines + "\n"))
			zw.Close()
			writeFile(t, filepath.Join(dir, packFile), buf.String())
			writeFile(t, filepath.Join(dir, "CONDITIONS.md"), "x")
			err := unpackCorpus(dir, t.TempDir())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one containing %q", err, tc.want)
			}
		})
	}
}

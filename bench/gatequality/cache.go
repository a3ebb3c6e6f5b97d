package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// cellCache keeps estimated cells under dir ("" for none) so a grown corpus simulates only new cells.
type cellCache struct{ dir string }

func (c cellCache) key(ds *design, p plan, cond condition, gates int, seed uint64, cfg config, est string) string {
	chunks := map[string]bool{}
	for _, pr := range ds.pairs {
		chunks[pr.chunk] = true
	}
	names := make([]string, 0, len(chunks))
	for n := range chunks {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := []any{cacheVersion, ds.name, ds.scenario, names, len(ds.pairs), ds.setupDur, ds.pairDur,
		p, cond, gates, seed, cfg.tolerance, cfg.percentile, est, cfg.corpusName}
	if p.Auto {
		parts = append(parts, ds.upDur) // only a sequential plan depends on it
	}
	b, _ := json.Marshal(parts)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:12])
}

// cacheVersion changes when what a cell means changes.
const cacheVersion = 6

func (c cellCache) get(key string) (cell, bool) {
	if c.dir == "" {
		return cell{}, false
	}
	b, err := os.ReadFile(filepath.Join(c.dir, key+".json"))
	if err != nil {
		return cell{}, false
	}
	var out cell
	if json.Unmarshal(b, &out) != nil {
		return cell{}, false
	}
	return out, true
}

func (c cellCache) put(key string, v cell) error {
	if c.dir == "" {
		return nil
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return fmt.Errorf("cell cache: %w", err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := filepath.Join(c.dir, key+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("cell cache: %w", err)
	}
	return os.Rename(tmp, filepath.Join(c.dir, key+".json"))
}

package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Section names of the report, in print order.
const (
	Canonical    = "Canonical"
	Pathological = "Pathological"
	Hardening    = "Hardening"
	Invalid      = "Invalid refused"
	Goldens      = "Goldens"
)

var sections = []string{Canonical, Pathological, Hardening, Invalid, Goldens}

var (
	canonicalName    = regexp.MustCompile(`^\d\d-`)
	pathologicalName = regexp.MustCompile(`^p\d+-`)
)

// sectionOf files a fixture under the reference pack's three groups by
// its file-name convention: NN-* canonical, pN-* pathological, the rest
// hardening.
func sectionOf(name string) string {
	switch {
	case canonicalName.MatchString(name):
		return Canonical
	case pathologicalName.MatchString(name):
		return Pathological
	}
	return Hardening
}

func jsonFiles(dir string) ([]string, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	slices.Sort(names)
	return names, err
}

func caseName(path string) string { return strings.TrimSuffix(filepath.Base(path), ".json") }

func readJSON(path string, into any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

var axisFields = []string{"acceptance", "conflict", "verification", "currency", "sufficiency"}

func toMap(v any) map[string]any {
	b, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

package testrun_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/testrun"
)

// Build caches: a baseline run seeds them, a later run starts from a copy
// of the seed, and what a later run writes never reaches the seed.
func TestBuildCacheSeeds(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "go")
	// Seeds of its own to watch, warm from the test binary's.
	seedDir := filepath.Join(t.TempDir(), "seeds")
	if err := os.CopyFS(seedDir, os.DirFS(seeds)); err != nil {
		t.Fatal(err)
	}
	before := countFiles(t, seedDir)
	opts := sandboxed(t, testrun.Options{})
	opts.Seeds = seedDir
	mod := map[string]string{"go.mod": "module example.com/calc\n\ngo 1.22\n", "calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(1)\n\t}\n}\n"}

	// A run that is not a baseline writes nothing to the seeds.
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, mod)
	r, _ := testrun.New("go", opts)
	if res, err := r.Run(t.Context(), dir); err != nil || res.Outcome != testrun.Pass {
		t.Fatalf("%+v, %v", res, err)
	}
	if n := countFiles(t, seedDir); n != before {
		t.Fatalf("a run that is not a baseline wrote %d files to the seeds", n-before)
	}

	// The baseline seeds Go's build cache.
	b, err := testrun.CheckBaseline(t.Context(), r, dir)
	if err != nil || !b.Startable {
		t.Fatalf("%+v, %v", b, err)
	}
	seeded := countFiles(t, filepath.Join(seedDir, "go-build"))
	if seeded <= before {
		t.Fatal("the baseline seeded nothing")
	}

	// A run with a cache layer of its own starts from the seed, and what
	// its code writes into the layer stays there.
	layer := t.TempDir()
	opts.Caches = layer
	poison := "package calc\n\nimport (\n\t\"os\"\n\t\"path/filepath\"\n\t\"testing\"\n)\n\nfunc TestPoison(t *testing.T) {\n" +
		"\tfilepath.WalkDir(os.Getenv(\"GOCACHE\"), func(p string, d os.DirEntry, err error) error {\n" +
		"\t\tif err == nil && !d.IsDir() && filepath.Ext(p) == \"\" {\n\t\t\tos.WriteFile(p, []byte(\"poisoned\"), 0o644)\n\t\t}\n\t\treturn nil\n\t})\n}\n"
	testenv.WriteFiles(t, dir, map[string]string{"poison_test.go": poison})
	r, _ = testrun.New("go", opts)
	if res, err := r.Run(t.Context(), dir); err != nil || res.Outcome != testrun.Pass {
		t.Fatalf("%+v, %v", res, err)
	}
	if countFiles(t, filepath.Join(layer, "go-build")) < seeded {
		t.Error("the run's layer did not start from the seed")
	}
	filepath.WalkDir(seedDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if raw, _ := os.ReadFile(p); strings.Contains(string(raw), "poisoned") {
				t.Errorf("the seed was changed through a run's layer: %s", p)
			}
		}
		return nil
	})
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

package testrun_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/azero-dev/azero/internal/sandbox"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/testrun"
)

// The cold and warm test runs of a language, each in a fresh copy of the
// project (a new worktree, as each azero run has):
//
//   - cold: no seed, an empty cache layer: everything is built;
//   - warm: the seed a baseline left, copied into a fresh layer (an azero
//     run's first test run after another run's baseline);
//   - warm-layer: the run's own layer, warm (its later test runs).
//
// go test -run XXX -bench BuildCaches -benchtime 3x ./internal/testrun
func BenchmarkBuildCaches(b *testing.B) {
	goProject := map[string]string{"go.mod": "module example.com/calc\n\ngo 1.22\n",
		"calc.go":      "package calc\n\nimport \"fmt\"\n\nfunc Add(a, b int) string { return fmt.Sprint(a + b) }\n",
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != \"3\" {\n\t\tt.Fatal(1)\n\t}\n}\n"}
	// A crate with a dependency outside the project, as a crate from the
	// registry is: what a seed keeps warm across runs.
	dep := b.TempDir()
	testenv.WriteFiles(b, dep, map[string]string{"Cargo.toml": "[package]\nname = \"dep\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"src/lib.rs": generatedRust(3000)})
	cargoProject := map[string]string{"Cargo.toml": "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ndep = { path = \"" + dep + "\" }\n",
		"src/lib.rs": "pub fn add(a: u64, b: u64) -> u64 { dep::f0(a) + b }\n#[test]\nfn adds() { assert_eq!(add(1, 2), 3); }\n"}
	for _, lang := range []struct {
		kind  string
		files map[string]string
	}{{"go", goProject}, {"cargo", cargoProject}} {
		b.Run(lang.kind, func(b *testing.B) {
			if _, err := exec.LookPath(lang.kind); err != nil {
				b.Skipf("%s is not installed", lang.kind)
			}
			s, err := sandbox.New(sandbox.Config{TempRoot: b.TempDir(), ReadOnly: []string{dep}})
			if err != nil {
				b.Fatal(err)
			}
			checkout := b.TempDir() // the project's cache key
			project := func() string {
				dir := b.TempDir()
				testenv.WriteFiles(b, dir, lang.files)
				return dir
			}
			run := func(opts testrun.Options, baseline bool) {
				opts.Sandbox, opts.Checkout = s, checkout
				r, err := testrun.New(lang.kind, opts)
				if err != nil {
					b.Fatal(err)
				}
				if baseline {
					bl, err := testrun.CheckBaseline(b.Context(), r, project())
					if err != nil || bl.Result.Outcome != testrun.Pass {
						b.Fatalf("%+v, %v", bl, err)
					}
					return
				}
				res, err := r.Run(b.Context(), project())
				if err != nil || res.Outcome != testrun.Pass {
					b.Fatalf("%s, %v\n%s", res.Summary, err, res.Output)
				}
			}
			b.Run("cold", func(b *testing.B) {
				for b.Loop() {
					run(testrun.Options{Seeds: b.TempDir()}, false)
				}
			})
			seedDir := b.TempDir()
			run(testrun.Options{Seeds: seedDir}, true)
			b.Run("warm", func(b *testing.B) {
				for b.Loop() {
					run(testrun.Options{Seeds: seedDir}, false)
				}
			})
			layer := b.TempDir()
			run(testrun.Options{Seeds: seedDir, Caches: layer}, false)
			b.Run("warm-layer", func(b *testing.B) {
				for b.Loop() {
					run(testrun.Options{Seeds: seedDir, Caches: layer}, false)
				}
			})
			b.Run("seed-copy", func(b *testing.B) {
				for b.Loop() {
					if err := testrun.CopyNew(seedDir, filepath.Join(b.TempDir(), "layer")); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(dirSize(b, seedDir))/(1<<20), "MiB")
			})
		})
	}
}

// generatedRust is a library of n small functions, something to compile.
func generatedRust(n int) string {
	var s string
	for i := range n {
		s += "pub fn f" + itoa(i) + "(x: u64) -> u64 { let mut v = x; for k in 0..(" + itoa(i%7+1) + ") { v = v.wrapping_mul(31).wrapping_add(k); } if v == 0 { x } else { x } }\n"
	}
	return s
}

func itoa(i int) string { return strconv.Itoa(i) }

func dirSize(b *testing.B, dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

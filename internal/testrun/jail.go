package testrun

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/azero-dev/azero/internal/sandbox"
)

// ErrNoSandbox is the error of a run or lint step without a sandbox:
// every process testrun starts may execute a model's code, so there is no
// unconfined default (sandbox.Off is the only way, asked for by name).
var ErrNoSandbox = errors.New("testrun: no sandbox: every process that may run a model's code runs in one (Options.Sandbox)")

// invocation is one process testrun starts, in its jail: dir (the project,
// writable but for its .git), the checkout's installed dependencies
// (read-only), and a cache layer.
type invocation struct {
	opts   Options
	dir    string
	jail   *sandbox.Jail
	caches string // the cache layer's root
}

// start prepares the jail of one process run in dir ("" for a process that
// needs no project, such as an interpreter probe); readOnly adds what else
// it may read.
func (o Options) start(dir string, readOnly ...string) (*invocation, error) {
	return o.startWith(dir, sandbox.Spec{ReadOnly: readOnly})
}

// startWith is start with more of the jail's spec: what else it may read
// and write.
func (o Options) startWith(dir string, more sandbox.Spec) (*invocation, error) {
	if o.Sandbox == nil {
		return nil, ErrNoSandbox
	}
	spec := sandbox.Spec{Dir: dir, ReadOnly: more.ReadOnly, Writable: more.Writable, Hide: []string{o.seeds()}}
	if dir != "" {
		spec.Writable = append(spec.Writable, dir)
		spec.ReadOnly = append(spec.ReadOnly, installed(o.Checkout)...)
		spec.Protect = []string{filepath.Join(dir, ".git")}
	}
	if o.Caches != "" {
		if err := os.MkdirAll(o.Caches, 0o700); err != nil {
			return nil, fmt.Errorf("cache layer: %w", err)
		}
		spec.Writable = append(spec.Writable, o.Caches)
	}
	j, err := o.Sandbox.Prepare(spec)
	if err != nil {
		return nil, err
	}
	inv := &invocation{opts: o, dir: dir, jail: j, caches: o.Caches}
	if inv.caches == "" {
		inv.caches = filepath.Join(j.Tmp, "azero-cache")
	}
	return inv, nil
}

func (inv *invocation) Close() error { return inv.jail.Close() }

// installed lists a checkout's installed dependencies, which git leaves
// out of a worktree made from it: node_modules and a virtual environment.
func installed(checkout string) []string {
	if checkout == "" {
		return nil
	}
	var out []string
	for _, d := range []string{"node_modules", ".venv", "venv"} {
		if p := filepath.Join(checkout, d); exists(p) {
			out = append(out, p)
		}
	}
	return out
}

// DefaultSeeds is where the trusted build caches are kept:
// $AZERO_CACHE_DIR/seed, else $XDG_CACHE_HOME/azero/seed, else
// ~/.cache/azero/seed, read from environ.
func DefaultSeeds(environ []string) string {
	switch {
	case getenv(environ, "AZERO_CACHE_DIR") != "":
		return filepath.Join(getenv(environ, "AZERO_CACHE_DIR"), "seed")
	case getenv(environ, "XDG_CACHE_HOME") != "":
		return filepath.Join(getenv(environ, "XDG_CACHE_HOME"), "azero", "seed")
	case getenv(environ, "HOME") != "":
		return filepath.Join(getenv(environ, "HOME"), ".cache", "azero", "seed")
	}
	return filepath.Join(os.TempDir(), "azero-cache", "seed")
}

func (o Options) seeds() string {
	if o.Seeds != "" {
		return o.Seeds
	}
	return DefaultSeeds(o.Environ)
}

// Cache layers: Go's build cache, shared by projects (it is content
// addressed), and one cargo target directory per project.
const goBuildCache = "go-build"

func cargoTarget(project string) string {
	abs, _ := filepath.Abs(project)
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join("cargo-target", hex.EncodeToString(sum[:8]))
}

// layer returns the directory name of the invocation's cache layer,
// made on first use from a copy of its seed: a copy, never a link, as a
// write through a hard link would change the seed.
func (inv *invocation) layer(name string) (string, error) {
	dst := filepath.Join(inv.caches, name)
	if exists(dst) {
		return dst, nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return "", fmt.Errorf("cache layer: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), ".new-")
	if err != nil {
		return "", fmt.Errorf("cache layer: %w", err)
	}
	if seed := filepath.Join(inv.opts.seeds(), name); exists(seed) {
		if err := copyNew(seed, tmp); err != nil {
			os.RemoveAll(tmp)
			return "", fmt.Errorf("cache layer from %s: %w", seed, err)
		}
	}
	if err := os.Rename(tmp, dst); err != nil {
		// Another invocation of the run made it first.
		os.RemoveAll(tmp)
		if !exists(dst) {
			return "", fmt.Errorf("cache layer: %w", err)
		}
	}
	return dst, nil
}

// promote adds to the seed the files the layer holds and the seed does
// not: what a baseline run (the base commit's own tests and code, before
// any model wrote anything) built.
func (inv *invocation) promote(name string) error {
	layer := filepath.Join(inv.caches, name)
	if !exists(layer) {
		return nil
	}
	seed := filepath.Join(inv.opts.seeds(), name)
	if err := os.MkdirAll(seed, 0o700); err != nil {
		return fmt.Errorf("cache seed: %w", err)
	}
	if err := copyNew(layer, seed); err != nil {
		return fmt.Errorf("cache seed: %w", err)
	}
	return nil
}

// copyNew copies the regular files and directories of src that dst lacks
// into dst, each file whole or not at all (written aside, then renamed),
// with its permissions. Other kinds of files (links) are left out.
func copyNew(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o700)
		case !d.Type().IsRegular() || exists(to):
			return nil
		}
		return copyFile(p, to)
	})
}

// copyFile copies a file through copy_file_range where the kernel has it
// (a reflink on file systems that share blocks).
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.CreateTemp(filepath.Dir(to), ".copy-")
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(out.Name(), info.Mode().Perm())
	}
	if err == nil {
		err = os.Rename(out.Name(), to)
	}
	if err != nil {
		os.Remove(out.Name())
	}
	return err
}

// baselineKey marks the context of CheckBaseline's run, whose build
// caches are trusted and become seeds.
type baselineKey struct{}

func isBaseline(ctx context.Context) bool {
	v, _ := ctx.Value(baselineKey{}).(bool)
	return v
}

// buildCaches are the settings that send a language's build caches to
// the invocation's cache layer: Go's build cache, cargo's target
// directory for the project.
func (inv *invocation) buildCaches(lang string) ([]string, error) {
	switch lang {
	case "go":
		cache, err := inv.layer(goBuildCache)
		if err != nil {
			return nil, err
		}
		return []string{"GOCACHE=" + cache}, nil
	case "rust":
		target, err := inv.layer(cargoTarget(inv.project()))
		if err != nil {
			return nil, err
		}
		return []string{"CARGO_TARGET_DIR=" + target, "CARGO_TERM_COLOR=never"}, nil
	}
	return nil, nil
}

// promoteBuildCaches adds what a baseline run built to the seeds. A seed
// that cannot be written leaves later runs cold, no worse.
func (inv *invocation) promoteBuildCaches(lang string) {
	switch lang {
	case "go":
		_ = inv.promote(goBuildCache)
	case "rust":
		_ = inv.promote(cargoTarget(inv.project()))
	}
}

// project names the project whose caches these are: the checkout a
// worktree was made from (each run has a worktree of its own), else dir.
func (inv *invocation) project() string {
	if inv.opts.Checkout != "" {
		return inv.opts.Checkout
	}
	return inv.dir
}

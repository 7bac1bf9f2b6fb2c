// Package answerkey seals the answers azero's own channels make, and the
// records azero keeps of its runs, so that an answer or a run's row written
// into azero's store by anything else (a model's code that reached the
// store, a hand-edited row) is refused instead of acted on.
//
// A seal is an HMAC-SHA256, keyed with 32 random bytes kept in a file of
// azero's state directory (FileName, mode 0600, created once), over the
// run's id, the question's id, the question's nonce (a random value the
// engine draws each time it asks a question, kept while that question
// stays asked) and everything the answer says: gate, key, text,
// confirmation, files, channel, who answered, from where, and when. A
// seal therefore binds an answer to one asking of one question of one
// run: an old sealed answer copied onto a later asking of the same
// question, or onto another run, does not verify.
//
// A record's seal (SealRecord) is an HMAC with the same key over a kind
// ("azero run v1") and the record's fields as stored, each prefixed by
// its length; the two kinds of seal cannot be mistaken for each other.
//
// Invariants:
//   - Only a process that can read the key file can seal; the sandbox that
//     runs model code hides the state directory, so model code cannot.
//   - Verification fails closed: a nil key, a missing seal, an answer for
//     another question, any changed field, all fail.
//   - A key file that cannot be read, or is not exactly 32 bytes, or can
//     be read by other users, is an error, never replaced silently: the
//     answers sealed with it would all turn into forgeries.
package answerkey

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/azero-dev/azero/internal/human"
)

// FileName is the key file's name inside azero's state directory.
const FileName = "answer.key"

// Size is the key's length in bytes.
const Size = 32

// ErrBadSeal: an answer's seal does not verify (no seal, another key,
// another run, question or asking, or a changed field).
var ErrBadSeal = errors.New("the answer's seal does not verify")

// ErrRecordSeal: a record's seal does not verify (no seal, another key,
// another kind, or a changed field).
var ErrRecordSeal = errors.New("the record's seal does not verify")

// Key seals and verifies answers and records.
type Key struct {
	path   string
	secret []byte
}

// Path is the file the key was read from.
func (k *Key) Path() string {
	if k == nil {
		return ""
	}
	return k.path
}

// Load reads the key of the state directory dir, creating it first when
// there is none. Creating is safe against other azero processes doing the
// same at once: the key is written whole to a new file (O_EXCL, 0600) and
// then linked to its name, which fails if another process linked first;
// every process then reads the one key that won.
func Load(dir string) (*Key, error) {
	path := filepath.Join(dir, FileName)
	k, err := read(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	if err := create(dir, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create the answer key %s: %w", path, err)
	}
	return read(path)
}

func read(path string) (*Key, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, unreadable(path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, unreadable(path, err)
	}
	if !info.Mode().IsRegular() {
		return nil, unreadable(path, fmt.Errorf("it is not a regular file (%s)", info.Mode().Type()))
	}
	if runtime.GOOS != "windows" && info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("the answer key %s can be read by other users (mode %04o): anyone who reads it can forge answers and runs; "+
			"make it private with `chmod 600 %s`", path, info.Mode().Perm(), path)
	}
	secret, err := io.ReadAll(io.LimitReader(f, Size+1))
	if err != nil {
		return nil, unreadable(path, err)
	}
	switch {
	case len(secret) > Size:
		return nil, unreadable(path, fmt.Errorf("it holds more than %d bytes", Size))
	case len(secret) < Size:
		return nil, unreadable(path, fmt.Errorf("it holds %d bytes, not %d", len(secret), Size))
	}
	return &Key{path: path, secret: secret}, nil
}

// unreadable is the error for a key that is there but cannot be used:
// azero refuses every answer and every stored run rather than make a new
// key.
func unreadable(path string, err error) error {
	return fmt.Errorf("read the answer key %s: %w; azero needs it to accept answers and to act on its stored runs, and refuses them all without it: "+
		"restore the file (32 bytes, mode 0600), or delete it so that a new one is made "+
		"(answers posted and not yet taken, and every run stored until then, are then refused as changed outside azero)", path, err)
}

func create(dir, path string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	secret := make([]byte, Size)
	if _, err := rand.Read(secret); err != nil {
		return err
	}
	// CreateTemp opens with O_EXCL and mode 0600.
	tmp, err := os.CreateTemp(dir, ".answer.key-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(secret); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// A link, unlike a rename, never replaces a key another process made.
	if err := os.Link(tmp.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// Seal returns a with its seal (Answer.MAC) for question q of run runID;
// a's QuestionID becomes q's id. A nil key returns a without a seal,
// which no key verifies.
func (k *Key) Seal(runID string, q human.Question, a human.Answer) human.Answer {
	a.QuestionID = q.ID
	a.MAC = ""
	if k == nil {
		return a
	}
	a.MAC = hex.EncodeToString(k.sum(runID, q, a))
	return a
}

// Verify checks a's seal for question q (its id and nonce) of run runID.
func (k *Key) Verify(runID string, q human.Question, a human.Answer) error {
	if k == nil {
		return fmt.Errorf("%w: no answer key to check it with", ErrBadSeal)
	}
	if a.MAC == "" {
		return fmt.Errorf("%w: it carries no seal", ErrBadSeal)
	}
	if q.ID == "" || a.QuestionID != q.ID {
		return fmt.Errorf("%w: it answers another question", ErrBadSeal)
	}
	got, err := hex.DecodeString(a.MAC)
	if err != nil || !hmac.Equal(got, k.sum(runID, q, a)) {
		return ErrBadSeal
	}
	return nil
}

// sum is the HMAC of the answer's canonical content: every field in a
// fixed order, each prefixed by its length, so that no two different
// answers encode alike.
func (k *Key) sum(runID string, q human.Question, a human.Answer) []byte {
	m := hmac.New(sha256.New, k.secret)
	field(m, "azero answer v1")
	for _, s := range []string{runID, q.ID, q.Nonce, a.Gate, a.Key, a.Text, a.Confirm} {
		field(m, s)
	}
	names := make([]string, 0, len(a.Files))
	for name := range a.Files {
		names = append(names, name)
	}
	slices.Sort(names)
	count(m, len(names))
	for _, name := range names {
		field(m, name)
		field(m, a.Files[name])
	}
	at := ""
	if !a.At.IsZero() {
		at = a.At.UTC().Format(time.RFC3339Nano)
	}
	for _, s := range []string{a.Channel, a.By, a.RemoteAddr, a.UserAgent, at} {
		field(m, s)
	}
	return m.Sum(nil)
}

// SealRecord returns the seal of a record of kind made of fields: the
// hex of an HMAC-SHA256 over the kind and each field, in order, each
// prefixed by its length, so that no two different records encode alike.
// The fields are bytes as stored, taken as they are (no JSON on the
// way). A nil key returns "", which no key verifies.
func (k *Key) SealRecord(kind string, fields ...[]byte) string {
	if k == nil {
		return ""
	}
	return hex.EncodeToString(k.recordSum(kind, fields))
}

// VerifyRecord checks seal, the seal stored with a record of kind made of
// fields.
func (k *Key) VerifyRecord(seal, kind string, fields ...[]byte) error {
	if k == nil {
		return fmt.Errorf("%w: no key to check it with", ErrRecordSeal)
	}
	if seal == "" {
		return fmt.Errorf("%w: it carries no seal", ErrRecordSeal)
	}
	got, err := hex.DecodeString(seal)
	if err != nil || !hmac.Equal(got, k.recordSum(kind, fields)) {
		return fmt.Errorf("%w: its seal does not match what it holds", ErrRecordSeal)
	}
	return nil
}

func (k *Key) recordSum(kind string, fields [][]byte) []byte {
	m := hmac.New(sha256.New, k.secret)
	// An answer's first field is "azero answer v1": no record's sum can
	// be an answer's.
	field(m, "azero record")
	field(m, kind)
	count(m, len(fields))
	for _, f := range fields {
		count(m, len(f))
		m.Write(f)
	}
	return m.Sum(nil)
}

// field writes s as JSON carries it: each byte that is not valid UTF-8
// becomes U+FFFD, as encoding/json makes it, so that an answer sealed
// before it travels as JSON verifies after.
func field(h hash.Hash, s string) {
	if !utf8.ValidString(s) {
		// Ranging over a string yields U+FFFD for each invalid byte.
		var b strings.Builder
		for _, r := range s {
			b.WriteRune(r)
		}
		s = b.String()
	}
	count(h, len(s))
	io.WriteString(h, s)
}

func count(h hash.Hash, n int) {
	var b [binary.MaxVarintLen64]byte
	h.Write(b[:binary.PutUvarint(b[:], uint64(n))])
}

// Nonce returns a fresh random nonce for a question being asked.
func Nonce() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b)
}

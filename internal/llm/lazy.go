package llm

import (
	"context"
	"sync"
)

// Lazy returns a Model named name that opens the real one with open on its
// first call, and fails that call (and every later one) with open's error.
// A run resumed past its last model call (at its merge, say) needs no key.
func Lazy(name string, open func() (Model, error)) Model {
	return &lazy{name: name, open: open}
}

type lazy struct {
	name string
	open func() (Model, error)
	once sync.Once
	m    Model
	err  error
}

func (l *lazy) Name() string { return l.name }

// Open opens the model now, if it is not open yet, and returns what
// opening it gave: a check that must fail early (a missing key) calls it.
func (l *lazy) Open() error {
	l.once.Do(func() { l.m, l.err = l.open() })
	return l.err
}

func (l *lazy) Generate(ctx context.Context, req Request) (Response, error) {
	if err := l.Open(); err != nil {
		return Response{}, err
	}
	return l.m.Generate(ctx, req)
}

// Open opens m now when it is opened lazily (see Lazy), so that a missing
// key fails before any work; other models are open already.
func Open(m Model) error {
	if o, ok := m.(interface{ Open() error }); ok {
		return o.Open()
	}
	return nil
}

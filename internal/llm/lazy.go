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

func (l *lazy) Generate(ctx context.Context, req Request) (Response, error) {
	l.once.Do(func() { l.m, l.err = l.open() })
	if l.err != nil {
		return Response{}, l.err
	}
	return l.m.Generate(ctx, req)
}

package runs

import (
	"errors"
	"fmt"
)

// RequestError says that what was asked of the service cannot be meant:
// an unknown engine, a mode that does not exist, inputs a workflow
// refuses before any work. The command line reports it as a usage error.
type RequestError struct{ Err error }

func (e *RequestError) Error() string { return e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

// requestf returns a RequestError.
func requestf(format string, args ...any) error {
	return &RequestError{Err: fmt.Errorf(format, args...)}
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// ErrNotWaiting is matched by an answer refused because the run does not
// ask that question now: it waits for nothing, at another gate, asks
// another question since, or its question was answered first.
var ErrNotWaiting = errors.New("the run does not wait for that answer")

// ErrInvalidAnswer is matched by an answer refused because it does not
// answer the question: a partial or wrong word, an option the question
// does not offer, text missing where an option needs it.
var ErrInvalidAnswer = errors.New("the answer does not answer the question")

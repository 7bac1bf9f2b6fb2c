package runs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/rundoc"
	"github.com/azero-dev/azero/internal/store"
)

// Continuation never strands an answer: a run whose answer was accepted
// is driven on by the service in this process (azero serve) when no
// live process drives it: at once after the answer, and, looking again
// at start and every ContinueEvery, whatever else left such a run (a
// terminal killed before it took the answer, a server killed before it
// continued the run). A run the service was driving when its process
// died (its lease names the continuer and its process is gone) is driven
// on too, as that process would have done: the answer it took is not
// left at a step nobody runs. A lease of a dead process on this machine
// is not live (store.LeaseLive), so none of this waits for the dead
// lease to run out. A run stopped by a graceful stop of the service is
// saved, and resumed by a person.

// ContinueEvery is how often the continuer looks for runs to drive on.
const ContinueEvery = 5 * time.Second

// continueHolder names the continuer in the leases it takes.
const continueHolder = "continue"

// maxContinues bounds the drives one answer can start in a row.
const maxContinues = 100

// continuer is the local engine's continuation.
type continuer struct {
	mu      sync.Mutex
	ctx     context.Context // ends when it stops; nil until started
	stop    context.CancelFunc
	log     func(string)
	every   time.Duration
	driving map[string]bool // runs being continued now
	runs    sync.WaitGroup
}

// Continue starts continuing runs in this process until ctx ends or stop
// is called, which interrupts the runs it drives (they are saved) and
// waits for them. log receives a line for each run continued and each
// problem. every is how often it looks again (0: ContinueEvery).
func (l *localEngine) Continue(ctx context.Context, log func(string), every time.Duration) (stop func()) {
	c := &l.cont
	c.mu.Lock()
	if c.ctx != nil {
		c.mu.Unlock()
		return func() {}
	}
	if every <= 0 {
		every = ContinueEvery
	}
	if log == nil {
		log = func(string) {}
	}
	c.ctx, c.stop = context.WithCancel(ctx)
	c.log, c.every, c.driving = log, every, map[string]bool{}
	cctx := c.ctx
	c.runs.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.runs.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			l.scan()
			select {
			case <-cctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return l.stopContinuing
}

// stopContinuing interrupts the runs being continued and waits for them
// to checkpoint.
func (l *localEngine) stopContinuing() {
	c := &l.cont
	c.mu.Lock()
	stop := c.stop
	c.mu.Unlock()
	if stop == nil {
		return
	}
	stop()
	c.runs.Wait()
}

// Driving lists the runs the continuer drives now, by id.
func (l *localEngine) Driving() []string {
	c := &l.cont
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]string, 0, len(c.driving))
	for id := range c.driving {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// scan continues the runs holding an answer nobody drives, and those
// the continuer drove when its process died.
func (l *localEngine) scan() {
	c := &l.cont
	ctx := c.ctx
	asking, err := l.st.ListRuns(ctx, store.Filter{Asking: true})
	if err != nil {
		if ctx.Err() == nil {
			c.log(fmt.Sprintf("cannot list runs: %v", err))
		}
		return
	}
	for _, r := range asking {
		if l.answeredIdle(r.ID) && !l.isDriving(r.ID) {
			c.log(fmt.Sprintf("run %s has an answer nobody took: continuing it", r.ID))
			l.continueIfIdle(r.ID)
		}
	}
	running, err := l.st.ListRuns(ctx, store.Filter{Status: store.StatusRunning})
	if err != nil {
		return
	}
	for _, r := range running {
		if flow.LeaseHolder(r.Lease) != continueHolder || l.st.LeaseLive(r) || l.isDriving(r.ID) {
			continue
		}
		c.log(fmt.Sprintf("run %s was being continued when its azero serve stopped: continuing it", r.ID))
		l.continueRun(r.ID)
	}
}

func (l *localEngine) isDriving(id string) bool {
	c := &l.cont
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.driving[id]
}

// continueIfIdle starts driving the run when no live process does (it
// waits, or its driver died while asking), and reports whether it did or
// already does. A run driven elsewhere takes the posted answer itself.
func (l *localEngine) continueIfIdle(runID string) bool {
	c := &l.cont
	c.mu.Lock()
	ctx := c.ctx
	c.mu.Unlock()
	if ctx == nil {
		return false
	}
	r, err := l.st.GetRun(ctx, runID)
	if err != nil || r.Status.Finished() || l.st.LeaseLive(r) {
		return l.isDriving(runID)
	}
	return l.continueRun(runID)
}

// continueRun drives the run on in the background, unless the continuer
// does already or has stopped; it reports whether the continuer drives
// it.
func (l *localEngine) continueRun(runID string) bool {
	c := &l.cont
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.driving[runID] {
		return true
	}
	if c.ctx == nil || c.ctx.Err() != nil {
		return false
	}
	c.driving[runID] = true
	c.runs.Add(1)
	go func() {
		defer c.runs.Done()
		// An answer posted while this drive was stopping at the next gate
		// is taken by driving again.
		for range maxContinues {
			_, err := l.drive(c.ctx, runID, Terminal{}, "serve", continueHolder)
			if errors.Is(err, context.Canceled) {
				err = nil
			}
			c.log(l.outcomeLine(runID, err))
			if !l.answeredIdle(runID) {
				break
			}
		}
		c.mu.Lock()
		delete(c.driving, runID)
		c.mu.Unlock()
		// An answer posted between the check above and now.
		if l.answeredIdle(runID) {
			l.continueIfIdle(runID)
		}
	}()
	return true
}

// answeredIdle reports whether the run has an answer posted for the
// question it waits at and no live process drives it. Any answer counts
// here: driving the run takes a real one, and refuses, records and
// removes a forged one.
func (l *localEngine) answeredIdle(runID string) bool {
	ctx := l.cont.ctx
	if ctx.Err() != nil {
		return false
	}
	r, err := l.st.GetRun(ctx, runID)
	return err == nil && !r.Status.Finished() && len(r.Question) > 0 && len(r.Answer) > 0 && !l.st.LeaseLive(r)
}

// outcomeLine says in one line where a continued run stands.
func (l *localEngine) outcomeLine(runID string, err error) string {
	r, gerr := l.st.GetRun(context.Background(), runID)
	if gerr != nil {
		return fmt.Sprintf("run %s continued: %v", runID, errors.Join(err, gerr))
	}
	switch st := rundoc.Status(l.st, r); st {
	case store.StatusInterrupted:
		return fmt.Sprintf("run %s is saved at %s: azero serve stopped while it continued it; it can be resumed", runID, r.Node)
	case store.StatusWaiting:
		return fmt.Sprintf("run %s continued after the answer and now waits at %s", runID, r.Node)
	case store.StatusDone, store.StatusAborted:
		return fmt.Sprintf("run %s continued after the answer and is %s", runID, st)
	default:
		msg := fmt.Sprintf("run %s continued after the answer and is %s at %s", runID, st, r.Node)
		if err != nil {
			line, _, _ := strings.Cut(err.Error(), "\n")
			msg += ": " + line
		}
		return msg
	}
}

// Answer takes an answer through the one answer path and continues the
// run when nobody drives it.
func (l *localEngine) Answer(ctx context.Context, ref string, r Reply) (Accepted, error) {
	res, err := take(ctx, l.env, l.st, ref, r)
	if err != nil {
		return res, err
	}
	res.Continued = l.continueIfIdle(res.RunID)
	return res, nil
}

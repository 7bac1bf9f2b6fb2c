package cli

// interruptNote is what azero says when a first Ctrl-C (or SIGTERM)
// arrives: what the command running does about it, which it set with
// onInterrupt. By default a command drives a run, which is saved.
func (f *Factory) interruptNote() string {
	f.mu.Lock()
	note := f.interrupt
	f.mu.Unlock()
	if note == nil {
		return "azero: interrupted; saving the run (press Ctrl-C again to quit at once)"
	}
	return note()
}

// onInterrupt sets what azero says on a first Ctrl-C while the command
// runs: note is called when it arrives, so it can say what is true then.
func (f *Factory) onInterrupt(note func() string) {
	f.mu.Lock()
	f.interrupt = note
	f.mu.Unlock()
}

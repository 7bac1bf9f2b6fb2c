package iostreams

import "golang.org/x/sys/windows"

// flushTerminalInput discards the console's pending input events.
func flushTerminalInput(fd int) error {
	return windows.FlushConsoleInputBuffer(windows.Handle(fd))
}

package iostreams

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// NotRegularError reports a path that is not a regular file. A named
// pipe, a device or a socket may never end, or never begin: opening one
// could block for good, reading one could exhaust memory.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, FileKind(e.Mode))
}

// FileKind names, in words, the kind of file m is.
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "an irregular file"
}

// ReadRegularFile reads the file at path (symbolic links followed) when it
// is a regular file of at most limit bytes: anything else is refused
// before it is opened (*NotRegularError), and a file over the limit, or
// one that grows over it while it is read, is refused without being held
// (*InputTooLargeError naming path). Files that configure azero or feed it
// (a config, a script, a context file) are read with it.
func ReadRegularFile(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	if fi.Size() > limit {
		return nil, &InputTooLargeError{Name: path, Limit: limit}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &InputTooLargeError{Name: path, Limit: limit}
	}
	return data, nil
}

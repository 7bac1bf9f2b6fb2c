// Command azero lets AI models write software under human governance.
package main

import (
	"os"

	"github.com/azero-dev/azero/internal/cli"
	"github.com/azero-dev/azero/internal/sandbox"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	sandbox.Init() // the sandbox's helper, when azero was started as one
	os.Exit(cli.Main(version))
}

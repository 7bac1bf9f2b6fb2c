// Command azero lets AI models write software under human governance.
package main

import (
	"os"

	"github.com/azero-dev/azero/internal/cli"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() { os.Exit(cli.Main(version)) }

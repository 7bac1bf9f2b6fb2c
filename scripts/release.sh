#!/usr/bin/env bash
# Build azero's release binaries into dist/: linux and darwin, amd64 and
# arm64; static (CGO_ENABLED=0), with build paths trimmed (-trimpath), no
# symbol table or DWARF (-s -w), and the version stamped from git; then
# dist/SHA256SUMS. Each platform gets two binaries:
#
#   azero-OS-ARCH            every command, on the local engine: the lean
#                            build (-tags lean), without the Temporal SDK,
#                            so every command (the pre-commit gate, the
#                            Claude Code hook) starts faster
#   azero-temporal-OS-ARCH   the whole azero, the Temporal engine included
#                            (what go install builds); installed next to
#                            azero as azero-temporal, it takes over the
#                            commands run with --engine temporal, and
#                            `azero worker`
#
#   scripts/release.sh            # version: git describe --tags --always --dirty
#   scripts/release.sh v0.4.0     # an explicit version
#   DIST=/tmp/out scripts/release.sh
#
# `azero version` prints the stamped version. To publish: tag the commit
# (git tag v0.4.0), run this script on the tag, upload dist/* to the
# release, and check the sums (cd dist && sha256sum -c SHA256SUMS).
set -euo pipefail
cd "$(dirname "$0")/.."

version=${1:-$(git describe --tags --always --dirty)}
# The version goes into -ldflags: keep it to the characters a tag uses.
if ! [[ $version =~ ^[A-Za-z0-9][A-Za-z0-9._+-]*$ ]]; then
  echo "release: version '$version' must be letters, digits and . _ + - (like v0.4.0)" >&2
  exit 2
fi
case $version in
  *-dirty) echo "release: warning: the working tree has uncommitted changes ($version)" >&2 ;;
esac

dist=${DIST:-dist}
rm -rf "$dist"
mkdir -p "$dist"

for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64; do
  goos=${target%/*}
  goarch=${target#*/}
  for name in azero azero-temporal; do
    tags=lean
    if [ "$name" = azero-temporal ]; then tags=; fi
    out="$dist/$name-$goos-$goarch"
    echo "release: $out ($version)"
    # -buildvcs=auto overrides a GOFLAGS=-buildvcs=false: the commit goes into
    # the build info (azero version --json) when this is a git checkout.
    CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -buildvcs=auto -tags "$tags" \
      -ldflags "-s -w -X main.version=$version" -o "$out" ./cmd/azero
  done
done

# The binaries for this machine, if they were built, must say what they are.
for name in azero azero-temporal; do
  host="$dist/$name-$(go env GOHOSTOS)-$(go env GOHOSTARCH)"
  if [ -x "$host" ]; then
    got=$("$host" version)
    case $got in
      "azero $version "*) ;;
      *) echo "release: $host version printed '$got', want version $version" >&2; exit 1 ;;
    esac
  fi
done

(
  cd "$dist"
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum azero-* >SHA256SUMS
  else
    shasum -a 256 azero-* >SHA256SUMS
  fi
)
ls -l "$dist"
echo "release: $version in $dist/ (check with: cd $dist && sha256sum -c SHA256SUMS)"

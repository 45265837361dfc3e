#!/usr/bin/env bash
# fuzz.sh: run every fuzz target of the repository (each `func FuzzX` of a _test.go file) for
# FUZZTIME (default 2000x: 2,000 inputs) each, one after the other: `go test -fuzz` takes one target of one
# package per run. A crash fails the script; the input that caused it is written under that
# package's testdata/fuzz/FuzzX/, where plain `go test` runs it from then on.
set -euo pipefail
cd "$(dirname "$0")/../.."
go=${GO:-go}
# A count, not a duration: Go 1.26's fuzz coordinator can fail a target at a duration's
# deadline with "context deadline exceeded" and no crash (go.dev/issue/75804).
fuzztime=${FUZZTIME:-2000x}
# Minimizing a new input can take longer than the run: a short run keeps what it finds whole.
minimize=${FUZZMINIMIZETIME:-1s}
files=$(git ls-files '*_test.go' 2>/dev/null || find . -name '*_test.go' -not -path './.cache/*')
targets=()
for f in $(grep -l '^func Fuzz' $files); do
	for name in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$f"); do
		targets+=("./$(dirname "$f") $name")
	done
done
[ ${#targets[@]} -gt 0 ] || { echo "fuzz.sh: no fuzz targets found" >&2; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for t in "${targets[@]}"; do
	set -- $t
	echo "fuzz: $2 in $1 for $fuzztime"
	# Quiet unless it fails: the fuzzer's progress lines say nothing a passing run needs.
	if ! $go test -run '^$' -fuzz "^$2\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "$1" >"$out" 2>&1; then
		cat "$out"
		exit 1
	fi
done

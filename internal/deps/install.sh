#!/usr/bin/env bash
# install.sh PREFIX BIN CACHE: install the built binary BIN, the fetched runtime and models of
# CACHE, the batch script, the docs and an Lmod module file under PREFIX (`make install`). No
# root, no apt: it only copies. The layout is the one internal/job/locate.go looks for beside
# the binary, so the installed program finds its files from any working folder:
#
#   PREFIX/bin/facefusion
#   PREFIX/lib/facefusion/libonnxruntime.so.1           (job.InstallRuntime)
#   PREFIX/lib/facefusion/libonnxruntime_providers_{cuda,tensorrt,shared}.so, LICENSE, VERSION
#                                     (make fetch-gpu's, when CACHE/ort-gpu holds them: the
#                                     runtime looks for its GPU providers beside itself)
#   PREFIX/share/facefusion/models/                     (job.InstallModels)
#   PREFIX/share/facefusion/facefusion.sbatch
#   PREFIX/share/doc/facefusion/README.md, docs/*.md, default.toml (every job key, commented)
#   PREFIX/share/modulefiles/facefusion/VERSION.lua     (VERSION: `facefusion --version`)
#
# Each file is copied beside its final name and renamed into place, and an unchanged file is
# left alone, so a rerun after an interruption finishes the install and a reinstall is cheap.
set -euo pipefail
prefix=${1:?usage: install.sh PREFIX BIN CACHE}
bin=${2:?usage: install.sh PREFIX BIN CACHE}
cache=${3:?usage: install.sh PREFIX BIN CACHE}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

[ -x "$bin" ] || { echo "install: $bin is missing: run \`make build\`" >&2; exit 1; }
runtime=$cache/ort/libonnxruntime.so.1
[ -s "$runtime" ] || { echo "install: $runtime is missing: run \`make fetch\`" >&2; exit 1; }
shopt -s nullglob
models=("$cache"/models/*)
shopt -u nullglob
[ ${#models[@]} -gt 0 ] || { echo "install: no model files in $cache/models: run \`make fetch\`" >&2; exit 1; }

# The GPU providers, only where make fetch-gpu has brought them, and then all of them.
gpu=$cache/ort-gpu
gpufiles=(libonnxruntime_providers_cuda.so libonnxruntime_providers_tensorrt.so libonnxruntime_providers_shared.so LICENSE VERSION)
if [ -e "$gpu" ]; then
	for f in "${gpufiles[@]}"; do
		[ -s "$gpu/$f" ] || { echo "install: $gpu/$f is missing: run \`make fetch-gpu\` again (or remove $gpu)" >&2; exit 1; }
	done
else
	gpu=
fi

version=$("$bin" --version | awk 'NR == 1 { print $2 }')
[[ $version =~ ^[0-9A-Za-z._+-]+$ ]] || { echo "install: $bin --version did not print a version (got \"$version\")" >&2; exit 1; }

mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)

# put SRC DST MODE: DST becomes a copy of SRC with MODE, unless it already is one.
put() {
	mkdir -p "$(dirname "$2")"
	if ! cmp -s "$1" "$2"; then
		cp "$1" "$2.part"
		mv -f "$2.part" "$2"
	fi
	chmod "$3" "$2"
}

put "$bin" "$prefix/bin/facefusion" 755
put "$runtime" "$prefix/lib/facefusion/libonnxruntime.so.1" 644
if [ -n "$gpu" ]; then
	for f in "${gpufiles[@]}"; do put "$gpu/$f" "$prefix/lib/facefusion/$f" 644; done
	echo "install: ONNX Runtime $(cat "$gpu/VERSION")'s CUDA and TensorRT providers (make fetch-gpu) in $prefix/lib/facefusion, with their licence" >&2
fi
for m in "${models[@]}"; do
	[ -f "$m" ] && put "$m" "$prefix/share/facefusion/models/$(basename "$m")" 644
done
put "$root/sbatch/facefusion.sbatch" "$prefix/share/facefusion/facefusion.sbatch" 755
put "$root/README.md" "$prefix/share/doc/facefusion/README.md" 644
for d in "$root"/docs/*.md; do put "$d" "$prefix/share/doc/facefusion/docs/${d##*/}" 644; done
put "$root/configs/default.toml" "$prefix/share/doc/facefusion/default.toml" 644
put "$root/docs/facefusion.1" "$prefix/share/man/man1/facefusion.1" 644

module=$prefix/share/modulefiles/facefusion/$version.lua
mkdir -p "$(dirname "$module")"
sed "s/@VERSION@/$version/g" "$root/internal/deps/facefusion.lua" >"$module.part"
chmod 644 "$module.part"
mv -f "$module.part" "$module"

echo "installed facefusion $version in $prefix; to use it:" >&2
echo "  module use $prefix/share/modulefiles && module load facefusion" >&2
echo "$prefix/bin/facefusion"

#!/usr/bin/env bash
# gpu-check.sh [CACHE [gpucheck flags]]: the GPU check of the shared engines and the CUDA provider
# (internal/deps/gpucheck), as a bundle for a GPU node, in parts a device call can carry, then
# rehearsed here from those parts (GPU_CHECK_RUN=0: build only). `make gpu-check` runs it.
#
# The bundle (.build/gpu-check/bundle) holds gpucheck, in lib/ ONNX Runtime's core library
# (make fetch) and make fetch-gpu's provider libraries (the CUDA one is 229 MB), the
# embedded default's BlazeFace and fr_feature in models/, a sample image, the demo clip (for
# NVDEC) and run.sh. .build/gpu-check/parts holds it as gzip'd parts of GPU_CHECK_PART_MIB MiB
# (56) with a MANIFEST of sha256s (gpu-check-parts.sh); docs/development.md says how to carry
# them to a GPU node one call at a time. The node needs no Go or network: its CUDA 13 runtime
# libraries and cuDNN come from python3's packages (nvidia-cuda-runtime, nvidia-cublas,
# nvidia-cudnn-cu13) or its library path, and NVENC/NVDEC are tried through its ffmpeg when it
# has one.
#
# Here, without a GPU, the rehearsal reassembles the parts in a temporary stage, checks every
# sha256, runs what it can on the CPU, names what it could not verify and exits 2.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${1:-$root/.cache}
if [ $# -gt 0 ]; then shift; fi # the rest are gpucheck's flags, for the rehearsal
out=${GPU_CHECK_DIR:-$root/.build/gpu-check}
bundle=$out/bundle
cd "$root"

need() { [ -s "$1" ] || { echo "gpu-check: $1 is missing: run \`$2\`" >&2; exit 1; }; }
need "$cache/ort/libonnxruntime.so.1" "make fetch"
need "$cache/models/blazeface_front_128.onnx" "make fetch"
need "$cache/models/fr_feature.onnx" "make fetch"
need "$cache/samples/grace_hopper.png" "make fetch"
need "$cache/demo/target.mp4" "make demo"
for f in libonnxruntime_providers_cuda.so libonnxruntime_providers_tensorrt.so libonnxruntime_providers_shared.so LICENSE VERSION; do
	need "$cache/ort-gpu/$f" "make fetch-gpu"
done

# The bundle folder is ours: made afresh each time.
# lib/ is laid out as make install lays out PREFIX/lib/facefusion: the core library with the
# provider libraries, their licence and VERSION beside it.
rm -rf "$bundle.new" && mkdir -p "$bundle.new/models" "$bundle.new/lib"
${GO:-go} build -buildvcs=false -ldflags "-s -w" -o "$bundle.new/gpucheck" ./internal/deps/gpucheck
cp "$cache/ort/libonnxruntime.so.1" "$cache/ort-gpu/"* "$bundle.new/lib/"
cp "$cache/models/blazeface_front_128.onnx" "$cache/models/fr_feature.onnx" "$bundle.new/models/"
cp "$cache/samples/grace_hopper.png" "$cache/demo/target.mp4" "$bundle.new/"
cp internal/deps/gpu-check-run.sh "$bundle.new/run.sh"
rm -rf "$bundle" && mv "$bundle.new" "$bundle"
echo "gpu-check: bundle $bundle: $(($(du -sb "$bundle" | cut -f1) >> 20)) MiB" >&2
bash internal/deps/gpu-check-parts.sh pack "$bundle" "$out/parts" "${GPU_CHECK_PART_MIB:-56}"

[ "${GPU_CHECK_RUN:-1}" = 0 ] && exit 0
# The rehearsal: from the parts, as the node gets them, in a stage of our own.
stage=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check-stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
rc=0
GPU_CHECK_STAGE=$stage bash internal/deps/gpu-check-parts.sh run "$out/parts" "$@" || rc=$?
exit $rc

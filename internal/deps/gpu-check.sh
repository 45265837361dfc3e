#!/usr/bin/env bash
# gpu-check.sh [CACHE]: the GPU check of the shared engines (internal/deps/gpucheck). Builds a
# bundle in .build/gpu-check (GPU_CHECK_BUNDLE): gpucheck, ONNX Runtime's core library from
# CACHE/ort, BlazeFace and run.sh, under 64 MiB; then runs it here (GPU_CHECK_RUN=0: build only).
# A GPU node needs no Go, ffmpeg or network: copy the folder there and run `bash run.sh`. The
# node's CUDA 13 runtime libraries are found in python3's packages (nvidia-cuda-runtime,
# nvidia-cublas, nvidia-cudnn-cu13). ONNX Runtime's CUDA provider is not in the bundle (its
# libraries are hundreds of MB): GPU_ROUTE_DIR names a folder holding a core libonnxruntime.so.1
# with its libonnxruntime_providers_*.so (and a VERSIONS file whose providers= line is the ONNX
# Runtime version the providers were built from; gpucheck refuses one other than the core's),
# and FETCH_GPU_ROUTE=1 makes one here from npm (DESIGN §4: ORT 1.29.0 core from
# onnxruntime-node@1.29.0, CUDA providers from com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9,
# another build whose ORT version the package does not record, so its VERSIONS has no
# providers= line and gpucheck reports the pairing unverified; needs npm and the network).
# Without a GPU or the provider, gpucheck runs what it can on the CPU, says what it could not
# verify, and exits 2.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${1:-$root/.cache}
bundle=${GPU_CHECK_BUNDLE:-$root/.build/gpu-check}
cd "$root"

mkdir -p "$bundle"
${GO:-go} build -buildvcs=false -ldflags "-s -w" -o "$bundle/gpucheck.part" ./internal/deps/gpucheck
mv "$bundle/gpucheck.part" "$bundle/gpucheck"
cp "$cache/ort/libonnxruntime.so.1" "$bundle/libonnxruntime.so.1.part" && mv "$bundle/libonnxruntime.so.1.part" "$bundle/libonnxruntime.so.1"
cp "$cache/models/blazeface_front_128.onnx" "$bundle/"
cp internal/deps/gpu-check-run.sh "$bundle/run.sh"
size=$(cat "$bundle/gpucheck" "$bundle/libonnxruntime.so.1" "$bundle/blazeface_front_128.onnx" "$bundle/run.sh" | wc -c)
echo "gpu-check: bundle $bundle: $((size >> 20)) MiB (copy it to a GPU node and run bash run.sh there)" >&2
if [ "$size" -gt $((64 << 20)) ]; then
	echo "gpu-check: the bundle is over 64 MiB" >&2
	exit 1
fi

if [ "${FETCH_GPU_ROUTE:-0}" = 1 ] && [ -z "${GPU_ROUTE_DIR:-}" ]; then
	CORE=onnxruntime-node@1.29.0
	PROVIDERS=com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9
	route=$cache/ort-gpu-1.29.0
	if [ ! -s "$route/libonnxruntime.so.1" ] || [ ! -s "$route/libonnxruntime_providers_cuda.so" ]; then
		command -v npm >/dev/null || { echo "gpu-check: npm is needed to fetch the GPU route (or set GPU_ROUTE_DIR)" >&2; exit 1; }
		mkdir -p "$cache/dl"
		work=$(mktemp -d "$cache/dl/gpu.XXXXXX")
		trap 'rm -rf "$work"' EXIT
		echo "gpu-check: fetching $CORE and $PROVIDERS (npm pack, not installed)" >&2
		(cd "$work" && npm pack --silent "$CORE" >/dev/null && npm pack --silent "$PROVIDERS" >/dev/null)
		mkdir -p "$work/core" "$work/gpu" "$route.part"
		tar -xzf "$work"/onnxruntime-node-*.tgz -C "$work/core"
		tar -xzf "$work"/com.github.asus4.onnxruntime.linux-x64-gpu-*.tgz -C "$work/gpu"
		cp "$work/core/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" "$route.part/"
		# The providers' folder inside the package is not fixed across versions: take them by name.
		find "$work/gpu" -name 'libonnxruntime_providers_*.so' -exec cp {} "$route.part/" \;
		[ -s "$route.part/libonnxruntime_providers_cuda.so" ] || { echo "gpu-check: $PROVIDERS holds no libonnxruntime_providers_cuda.so" >&2; exit 1; }
		# The core's version is known; the providers' ONNX Runtime version is not recorded by
		# their package: no providers= line, so gpucheck says the pairing is not verified.
		printf 'core=%s\nproviders_package=%s\n' "${CORE#*@}" "$PROVIDERS" >"$route.part/VERSIONS"
		rm -rf "$route" && mv "$route.part" "$route"
	fi
	export GPU_ROUTE_DIR=$route
fi

[ "${GPU_CHECK_RUN:-1}" = 0 ] && exit 0
exec bash "$bundle/run.sh"

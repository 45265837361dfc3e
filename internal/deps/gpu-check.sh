#!/usr/bin/env bash
# gpu-check.sh [CACHE]: on a machine with an NVIDIA GPU, fetch the GPU route (DESIGN §4: ORT
# 1.29.0 core from npm onnxruntime-node@1.29.0 + CUDA providers from npm
# com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9), then run the detector, recognizer and
# inswapper-shaped fixtures through the CUDA provider at batch 1 and batched, printing fps.
# Without a GPU it prints one line and exits 2. The CUDA 13 / cuDNN 9 runtime libraries must
# be on LD_LIBRARY_PATH (e.g. the lib folders of the pip packages nvidia-cuda-runtime,
# nvidia-cublas, nvidia-cudnn-cu13); GPU_ROUTE_DIR may point at an already unpacked route
# (a folder holding libonnxruntime.so.1 and libonnxruntime_providers_*.so) for machines
# without registry access.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${1:-$root/.cache}
CORE=onnxruntime-node@1.29.0
PROVIDERS=com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
	echo "gpu-check: no NVIDIA GPU here (nvidia-smi finds none): run it on a GPU node, e.g. srun --gres=gpu:1 make gpu-check" >&2
	exit 2
fi

route=${GPU_ROUTE_DIR:-$cache/ort-gpu-1.29.0}
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
	rm -rf "$route" && mv "$route.part" "$route"
fi

# ORT loads the provider libraries from the core library's folder.
export LD_LIBRARY_PATH="$route${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cd "$root"

# The run report's GPU telemetry against the real NVML: a tiny job with the CUDA provider first
# (falling back to the CPU if the CUDA libraries are missing: the rank is still bound to the GPU
# and sampled), then its report must hold the GPU's name and at least one sample.
tele=$(mktemp -d)
ffmpeg -nostdin -loglevel error -f lavfi -i testsrc=s=320x240:r=25 -frames:v 25 -pix_fmt yuv420p "$tele/clip.mp4"
bin/facefusion run --execution-providers cuda cpu --onnxruntime-library "$route/libonnxruntime.so.1" \
	-s "$cache/samples/astronaut.png" -t "$tele/clip.mp4" -o "$tele/out.mp4" --report-path "$tele/report.json" --log-level warn >/dev/null
if ! grep -q '"available": true' "$tele/report.json" || ! grep -Eq '"samples": [1-9]' "$tele/report.json"; then
	echo "gpu-check: the run report has no GPU telemetry:" >&2
	cat "$tele/report.json" >&2
	exit 1
fi
echo "gpu-check: run report telemetry: $(grep -E '"(name|samples|utilization_max|memory_used_max_bytes|power_max_watts|temperature_max_celsius)"' "$tele/report.json" | tr -d ' \n')" >&2
rm -f "$tele/clip.mp4" "$tele/out.mp4" "$tele/report.json" && rmdir "$tele"
exec go run ./internal/deps/gpucheck -library "$route/libonnxruntime.so.1" -device "${GPU_DEVICE:-0}" -blazeface "$cache/models/blazeface_front_128.onnx"

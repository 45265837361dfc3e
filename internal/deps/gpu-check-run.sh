#!/usr/bin/env bash
# run.sh [gpucheck flags]: the GPU check from its bundle (made by make gpu-check), on a node
# with no Go, ffmpeg or network. It puts the node's CUDA runtime libraries from python3's
# packages (nvidia-cuda-runtime, nvidia-cublas, nvidia-cudnn-cu13) on the library path, uses
# the ONNX Runtime of GPU_ROUTE_DIR when set (a core with its CUDA provider libraries) and else
# the bundle's CPU core, and runs gpucheck: exit 0 all verified on a GPU, 2 something could not
# be (each named in a "not verified:" line), 1 a failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if command -v python3 >/dev/null 2>&1; then
	libs=$(python3 - <<'PY' 2>/dev/null || true
import glob, os, site
bases = site.getsitepackages() + [site.getusersitepackages()]
dirs = sorted({d for b in bases for p in ("nvidia/*/lib", "nvidia/*/lib64", "nvidia/cu13/lib") for d in glob.glob(os.path.join(b, p))})
print(":".join(dirs))
PY
)
	if [ -n "$libs" ]; then
		export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	fi
fi
lib=$here/libonnxruntime.so.1
if [ -n "${GPU_ROUTE_DIR:-}" ]; then
	# ONNX Runtime loads its provider libraries from the core library's folder.
	lib=$GPU_ROUTE_DIR/libonnxruntime.so.1
	export LD_LIBRARY_PATH="$GPU_ROUTE_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
exec "$here/gpucheck" -library "$lib" -blazeface "$here/blazeface_front_128.onnx" "$@"

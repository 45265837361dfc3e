#!/usr/bin/env bash
# run.sh [gpucheck flags]: the GPU check from its bundle (make gpu-check; reassembled on the
# node by gpu-check-parts.sh run), on a node with no Go or network. It puts the node's CUDA
# runtime libraries and cuDNN from python3's packages (nvidia-cuda-runtime, nvidia-cublas,
# nvidia-cudnn-cu13, …) on the library path, names the GPU provider libraries beside the
# bundle's runtime (lib/, make fetch-gpu's) as the binary's --execution-provider-library
# would (FACEFUSION_EXECUTION_PROVIDER_LIBRARY, the binary's variable, names others), and runs
# gpucheck: exit 0 all verified on a GPU, 2 something could not be (each named in a
# "not verified:" line), 1 a failure. One report, on stdout.
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
export FACEFUSION_EXECUTION_PROVIDER_LIBRARY=${FACEFUSION_EXECUTION_PROVIDER_LIBRARY:-$here/lib}
echo "gpu-check: bundle $here; $(uname -n); $(date -u +%Y-%m-%dT%H:%M:%SZ)"
if command -v nvidia-smi >/dev/null 2>&1; then
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu-check: nvidia-smi: /' || true
else
	echo "gpu-check: no nvidia-smi on PATH"
fi
exec "$here/gpucheck" -library "$here/lib/libonnxruntime.so.1" \
	-execution-provider-library "$FACEFUSION_EXECUTION_PROVIDER_LIBRARY" \
	-models "$here/models" -image "$here/grace_hopper.png" -clip "$here/target.mp4" "$@"

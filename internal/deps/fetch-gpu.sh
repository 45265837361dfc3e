#!/usr/bin/env bash
# fetch-gpu.sh CACHE: fetch ONNX Runtime's CUDA and TensorRT provider libraries into CACHE/ort-gpu
# (`make fetch-gpu`; never part of `make fetch`, `make demo` or `make test`: 179 MB packed).
# They come from the npm package below, packed (not installed) and checked against its pinned
# sha256 before anything is taken from it. CACHE/ort-gpu then holds:
#
#   libonnxruntime_providers_cuda.so      (229 MB; needs CUDA 13's runtime libraries and cuDNN 9)
#   libonnxruntime_providers_tensorrt.so  (needs TensorRT 10 too)
#   libonnxruntime_providers_shared.so    (ONNX Runtime loads it beside the core library: linked
#                                         into CACHE/ort, the checkout's runtime folder)
#   LICENSE                               (Microsoft's MIT licence, from the package)
#   VERSION                               (the ONNX Runtime version the libraries are built for)
#
# The runtime registers them as plugin execution providers (--execution-provider-library);
# `make install` copies them beside the installed runtime.
#
# ORT_GPU_TGZ=FILE takes the package from FILE (a copy of the .tgz `npm pack` makes, for a
# machine without npm or the network); it is checked against the same sha256. ORT_GPU_SHA256
# replaces the pinned sum: for the tests only, which check the script on a package they make.
set -euo pipefail
cache=${1:?usage: fetch-gpu.sh CACHE}
PACKAGE=com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9
PACKAGE_SHA256=2b459e0c17f340c92970c10ed86de4f37a3009f93c14053e6ad4334cbb6be412
# The ONNX Runtime release the package's libraries are built from: its README says so, and
# each provider library carries the version string, which is checked below.
ORT_GPU_VERSION=1.29.0
LIBS=(libonnxruntime_providers_cuda.so libonnxruntime_providers_tensorrt.so libonnxruntime_providers_shared.so)
# Where the package keeps them (a Unity package: Plugins/<platform>/<arch>).
LIBDIR=package/Plugins/Linux/x64
want=${ORT_GPU_SHA256:-$PACKAGE_SHA256}
dest=$cache/ort-gpu

have() { [ -s "$1" ]; }
# ONNX Runtime loads libonnxruntime_providers_shared.so from the core library's own folder only:
# a checkout's runtime is CACHE/ort's, so the host library is linked there (relative, so the
# cache may move); make install copies the real files side by side instead.
# Two runs on one cache (two users' `make fetch-gpu`, a job array's first steps) may overlap:
# every temporary name is private (mktemp beside its target) and every placement a rename.
link_shared() {
	local link=$cache/ort/libonnxruntime_providers_shared.so tmp
	[ -d "$cache/ort" ] || return 0
	[ -e "$link" ] && [ ! -L "$link" ] && return 0 # a file of the site's own: left alone
	tmp=$(mktemp -d "$cache/ort/.fetch-gpu.XXXXXX")
	if ! { ln -s ../ort-gpu/libonnxruntime_providers_shared.so "$tmp/link" && mv -fT "$tmp/link" "$link"; }; then
		rm -rf "$tmp"
		return 1
	fi
	rmdir "$tmp"
}
complete=1
for f in "${LIBS[@]}" LICENSE VERSION; do have "$dest/$f" || complete=0; done
if [ "$complete" = 1 ] && [ "$(cat "$dest/VERSION")" = "$ORT_GPU_VERSION" ]; then
	link_shared
	exit 0
fi

mkdir -p "$cache/dl"
work=$(mktemp -d "$cache/dl/gpu.XXXXXX")
placing= # the copy place has not renamed yet: removed if the script stops
trap 'rm -rf "$work"; [ -z "$placing" ] || rm -f "$placing"' EXIT
place() { # place SRC DST: a private copy beside DST, flushed, then renamed over it
	local tmp
	tmp=$(mktemp "$(dirname "$2")/.$(basename "$2").XXXXXX")
	placing=$tmp
	# One command a line: set -e ignores a failure before the last && of a list.
	cp "$1" "$tmp"
	chmod --reference="$1" "$tmp"
	sync "$tmp"
	mv -fT "$tmp" "$2"
	placing=
}
sha256() { sha256sum "$1" | cut -d' ' -f1; }

if [ -n "${ORT_GPU_TGZ:-}" ]; then
	echo "fetch-gpu: ONNX Runtime $ORT_GPU_VERSION's CUDA and TensorRT providers from $ORT_GPU_TGZ" >&2
	tgz=$ORT_GPU_TGZ
	[ -s "$tgz" ] || { echo "fetch-gpu: ORT_GPU_TGZ=$tgz: no such file" >&2; exit 1; }
else
	echo "fetch-gpu: ONNX Runtime $ORT_GPU_VERSION's CUDA and TensorRT providers (npm $PACKAGE, 179 MB, packed, not installed)" >&2
	bash "$(dirname "${BASH_SOURCE[0]}")/need.sh" certs npm
	(cd "$work" && npm pack --silent "$PACKAGE" >/dev/null)
	tgz=$(echo "$work"/*.tgz)
fi
got=$(sha256 "$tgz")
if [ "$got" != "$want" ]; then
	echo "fetch-gpu: $tgz has sha256 $got, not $want (npm $PACKAGE as pinned): refused; nothing was placed in $dest (a damaged download: run it again; a changed package: report it)" >&2
	exit 1
fi

members=()
for f in "${LIBS[@]}"; do members+=("$LIBDIR/$f"); done
tar -xzf "$tgz" -C "$work" package/LICENSE "${members[@]}"
for f in libonnxruntime_providers_cuda.so libonnxruntime_providers_tensorrt.so; do
	# The version ONNX Runtime compiled in, a NUL-ended string of its own in the library.
	if ! LC_ALL=C grep -qaxzF "$ORT_GPU_VERSION" "$work/$LIBDIR/$f"; then
		echo "fetch-gpu: $PACKAGE's $f does not carry ONNX Runtime's version $ORT_GPU_VERSION: refused (the package is not the build this script knows)" >&2
		exit 1
	fi
done
mkdir -p "$dest"
for f in "${LIBS[@]}"; do place "$work/$LIBDIR/$f" "$dest/$f"; done
place "$work/package/LICENSE" "$dest/LICENSE"
echo "$ORT_GPU_VERSION" >"$work/VERSION"
place "$work/VERSION" "$dest/VERSION"
link_shared
echo "fetch-gpu: $dest: ${LIBS[*]}, LICENSE, VERSION ($ORT_GPU_VERSION)" >&2

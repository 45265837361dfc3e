#!/usr/bin/env bash
# gpu-check-parts.sh: the GPU check's bundle (gpu-check.sh) as compressed parts small enough to
# travel one at a time (a device call carries 64 MiB at most, the repository included), and
# their reassembly on the GPU node, where nothing is used before its sha256 is checked. It needs
# bash, coreutils, tar and gzip, nothing else.
#
#   pack BUNDLE PARTS [MIB]  gzip BUNDLE's files into one tar stream, cut it into PARTS/part-01,
#                            part-02, … of MIB MiB at most (56 by default: one part and the
#                            repository fit one call; 64 at most), and write PARTS/MANIFEST: the
#                            sha256 of every part and of every file of BUNDLE. A copy of this
#                            script goes beside them, for a node without the repository.
#   stage PARTS [STAGE]      check the parts PARTS holds against PARTS/MANIFEST and copy them to
#                            STAGE, which outlasts the call on a machine kept warm; say which
#                            parts STAGE still lacks. A damaged part stops it.
#   unpack PARTS [STAGE]     stage, then, with every part staged and checked: reassemble them,
#                            unpack into STAGE/bundle and check every file; print that folder.
#   run PARTS [ARGS…]        unpack, then run the bundle's run.sh with ARGS (its report).
#
# STAGE is GPU_CHECK_STAGE, else /tmp/facefusion-gpu-check. Exit 1 with one line naming the part
# or file and what to do when something is missing or damaged.
set -euo pipefail
usage="usage: gpu-check-parts.sh pack BUNDLE PARTS [MIB] | stage PARTS [STAGE] | unpack PARTS [STAGE] | run PARTS [ARGS...]"
cmd=${1:?$usage}
die() { echo "gpu-check: $*" >&2; exit 1; }
sha256() { sha256sum "$1" | cut -d' ' -f1; }

# manifest PARTS KIND: the manifest's "SHA256 NAME" lines for parts (part-NN) or files (bundle/…).
manifest() {
	[ -s "$1/MANIFEST" ] || die "$1/MANIFEST is missing: carry it with every part (make gpu-check writes it beside them)"
	case $2 in
	parts) awk '$2 ~ /^part-[0-9]+$/ { print $1, $2 }' "$1/MANIFEST" ;;
	files) awk '$2 ~ /^bundle\// { print $1, $2 }' "$1/MANIFEST" ;;
	esac
}

pack() {
	local bundle=${1:?$usage} parts=${2:?$usage} mib=${3:-56}
	[[ $mib =~ ^[0-9]+$ ]] && [ "$mib" -ge 1 ] && [ "$mib" -le 64 ] || die "parts of $mib MiB: give 1 to 64"
	[ -d "$bundle" ] || die "$bundle is not a folder"
	local new=$parts.new
	rm -rf "$new" && mkdir -p "$new"
	tar -C "$bundle" -cf - . | gzip -6 | split -b "${mib}M" -d -a 2 --numeric-suffixes=1 - "$new/part-"
	{
		echo "# facefusion gpu-check bundle: gzip'd tar of bundle/, in parts of $mib MiB at most (gpu-check-parts.sh)"
		(cd "$new" && sha256sum part-*)
		(cd "$bundle" && find . -type f | LC_ALL=C sort | sed 's|^\./||' | while read -r f; do
			echo "$(sha256 "$f")  bundle/$f"
		done)
	} >"$new/MANIFEST"
	# This script rides along, for a node without the repository: bash PARTS/gpu-check-parts.sh run PARTS.
	cp "${BASH_SOURCE[0]}" "$new/gpu-check-parts.sh"
	rm -rf "$parts" && mv "$new" "$parts"
	local n
	n=$(manifest "$parts" parts | wc -l)
	echo "gpu-check: $parts: $n parts of at most $mib MiB and MANIFEST ($(du -cb "$parts"/part-* | tail -1 | cut -f1) bytes in all)" >&2
}

stage() {
	local parts=${1:?$usage} st=$2 sum name have=0 total=0 missing=()
	manifest "$parts" parts >/dev/null
	mkdir -p "$st"
	while read -r sum name; do
		total=$((total + 1))
		if [ -e "$parts/$name" ]; then
			got=$(sha256 "$parts/$name")
			[ "$got" = "$sum" ] || die "$parts/$name has sha256 $got, the manifest says $sum: the copy is damaged; refused (build it again with make gpu-check, or carry it again)"
			if ! cmp -s "$parts/$name" "$st/$name"; then
				# Two lines, not cp && mv: set -e ignores a failure left of &&.
				cp "$parts/$name" "$st/$name.part"
				mv -f "$st/$name.part" "$st/$name"
			fi
		fi
		if [ -e "$st/$name" ] && [ "$(sha256 "$st/$name")" = "$sum" ]; then
			have=$((have + 1))
		else
			missing+=("$name")
		fi
	done < <(manifest "$parts" parts)
	[ "$total" -gt 0 ] || die "$parts/MANIFEST lists no parts"
	cp "$parts/MANIFEST" "$st/MANIFEST.part"
	mv -f "$st/MANIFEST.part" "$st/MANIFEST"
	if [ ${#missing[@]} -gt 0 ]; then
		echo "gpu-check: $st holds $have of $total parts; still to stage: ${missing[*]}" >&2
	else
		echo "gpu-check: $st holds all $total parts" >&2
	fi
	STAGE_MISSING=${missing[*]:-}
}

unpack() {
	local parts=${1:?$usage} st=$2 sum name
	stage "$parts" "$st"
	[ -z "$STAGE_MISSING" ] || die "$st lacks $STAGE_MISSING: stage each with a call that carries it (a machine given back loses what was staged: stage them all again)"
	rm -rf "$st/bundle.new" && mkdir -p "$st/bundle.new"
	# The parts were checked as staged; the files are checked once unpacked.
	manifest "$st" parts | while read -r sum name; do cat "$st/$name"; done | tar -xzf - -C "$st/bundle.new"
	local n=0
	while read -r sum name; do
		n=$((n + 1))
		f=$st/bundle.new/${name#bundle/}
		[ -f "$f" ] || die "the reassembled bundle has no ${name#bundle/}: refused"
		got=$(sha256 "$f")
		[ "$got" = "$sum" ] || die "the reassembled bundle's ${name#bundle/} has sha256 $got, the manifest says $sum: refused (stage the parts again)"
	done < <(manifest "$st" files)
	[ "$(find "$st/bundle.new" -type f | wc -l)" = "$n" ] || die "the reassembled bundle holds files the manifest does not list: refused"
	rm -rf "$st/bundle" && mv "$st/bundle.new" "$st/bundle"
	echo "gpu-check: $st/bundle: $n files, each as the manifest says" >&2
}

stagedir=${GPU_CHECK_STAGE:-/tmp/facefusion-gpu-check}
case $cmd in
pack) pack "${@:2}" ;;
stage) stage "${2:?$usage}" "${3:-$stagedir}" ;;
unpack)
	unpack "${2:?$usage}" "${3:-$stagedir}"
	echo "${3:-$stagedir}/bundle"
	;;
run)
	unpack "${2:?$usage}" "$stagedir"
	exec bash "$stagedir/bundle/run.sh" "${@:3}"
	;;
*) die "$usage" ;;
esac

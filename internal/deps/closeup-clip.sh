#!/usr/bin/env bash
# closeup-clip.sh FACE OUT.mp4 [FRAMES]: a close-up target: 3 s of 852x480 at 25 fps (75 frames)
# in which one face (FACE: astronaut.png or grace_hopper.png from the samples) fills most of the
# frame's height and drifts and zooms slowly, like a talking head filmed close. Written beside
# OUT and renamed into place. FRAMES: only the first that many frames (the same motion; a test
# that reads the first few pays for no more). Tests and benchmarks make it with
# testenv.CloseUpClip (testenv.CloseUpClipFrames with FRAMES).
set -euo pipefail
face=${1:?usage: closeup-clip.sh FACE OUT.mp4 [FRAMES]}
out=${2:?usage: closeup-clip.sh FACE OUT.mp4 [FRAMES]}
length=(-t 3)
if [[ -n ${3:-} ]]; then
	length=(-frames:v "$3")
fi
# Where the face is (its landmarks' centre, in the 512 px wide sample) and how many sample
# pixels the frame's height spans: astronaut's face is 92 px from brow to chin, grace_hopper's
# 175, so each comes out about 300 px high of the 480.
case "$(basename "$face")" in
astronaut.*) cx=226 cy=132 span=150 ;;
grace_hopper.*) cx=266 cy=243 span=260 ;;
*)
	echo "closeup-clip.sh: $face: give astronaut.png or grace_hopper.png (the face's place is known for those)" >&2
	exit 2
	;;
esac
mkdir -p "$(dirname "$out")"
tmp="$out.part.mp4"
# Scaled so that the span fills 480 px, zoomed by up to 6 % and panned by up to ±16 px
# horizontally and ±8 px vertically, each on its own slow period.
ffmpeg -nostdin -hide_banner -loglevel error -y \
	-loop 1 -framerate 25 -i "$face" \
	-filter_complex "[0:v]scale=w='2*trunc(iw*480/$span*(1+0.06*(0.5-0.5*cos(t*0.8)))/2)':h=-2:eval=frame,crop=852:480:x='iw*$cx/512-426+16*sin(t*0.9)':y='iw*$cy/512-240+8*sin(t*1.3)',format=yuv420p[v]" \
	-map "[v]" "${length[@]}" -r 25 -c:v libx264 -preset veryfast -crf 18 -g 50 -bf 2 -movflags +faststart "$tmp"
mv -f "$tmp" "$out"

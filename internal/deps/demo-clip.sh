#!/usr/bin/env bash
# demo-clip.sh FACE.png OUT.mp4: make the demo target: 6 s of 1280x720 at 25 fps in which a crop
# of FACE moves and zooms over a plain background, with a 48 kHz stereo tone as its audio track.
# Written beside OUT and renamed into place.
set -euo pipefail
face=${1:?usage: demo-clip.sh FACE.png OUT.mp4}
out=${2:?usage: demo-clip.sh FACE.png OUT.mp4}
mkdir -p "$(dirname "$out")"
tmp="$out.part.mp4"
# The face of astronaut.png sits near x 177–272, y 81–175: a 250 px square around it, scaled to
# 520–700 px, gives a face of about 200–270 px, as a talking-head shot has.
ffmpeg -nostdin -hide_banner -loglevel error -y \
	-loop 1 -framerate 25 -i "$face" \
	-f lavfi -i "color=c=0x28313d:s=1280x720:r=25" \
	-f lavfi -i "sine=frequency=330:sample_rate=48000,aformat=channel_layouts=stereo" \
	-filter_complex "[0:v]crop=250:250:100:20,scale=w='2*trunc((520+180*(0.5-0.5*cos(t*1.1)))/2)':h=-2:eval=frame[f];[1:v][f]overlay=x='(W-w)/2+260*sin(t*0.7)':y='(H-h)/2+40*sin(t*1.3)':eval=frame:shortest=1,format=yuv420p[v]" \
	-map "[v]" -map 2:a -t 6 -r 25 -c:v libx264 -preset veryfast -crf 18 -g 50 -bf 2 -c:a aac -b:a 128k \
	-movflags +faststart "$tmp"
mv -f "$tmp" "$out"

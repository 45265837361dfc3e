package video

import (
	"fmt"
	"strconv"
	"strings"
)

// Timecode is an SMPTE timecode, HH:MM:SS:FF (HH:MM:SS;FF for drop-frame), as ffmpeg's
// `timecode` tag writes it: the target's names its first frame, and a trimmed output's first
// frame gets the target's timecode at the trim start (TimecodeAt).
//
// Frames are counted at the nominal rate (30 for 30000/1001). Drop-frame, as SMPTE 12M counts
// it at 29.97 and 59.94: the labels :00 and :01 (:00–:03 at 59.94) of every minute are skipped,
// except every tenth minute, so the label keeps up with the wall clock.

// timecodeRate is the timecode's frames per second for a video rate: the rate rounded, as
// ffmpeg's av_timecode_init does; 0 when none fits.
func timecodeRate(fps Rational) int {
	if !fps.Valid() {
		return 0
	}
	return (fps.Num + fps.Den/2) / fps.Den
}

// dropFrames is how many labels a drop-frame timecode skips a minute at base frames a second,
// or 0 when the base has no drop-frame form (only 30 and 60: 29.97 and 59.94).
func dropFrames(base int) int {
	switch base {
	case 30:
		return 2
	case 60:
		return 4
	}
	return 0
}

// parseTimecode reads tc as a frame count from 00:00:00:00 at base frames a second; drop says
// whether it is drop-frame (a ';' or '.' before the frames, as ffmpeg writes it).
func parseTimecode(tc string, base int) (frames int64, drop bool, err error) {
	tc = strings.TrimSpace(tc)
	if len(tc) < 11 || base <= 0 {
		return 0, false, fmt.Errorf("not a timecode: %q", tc)
	}
	sep := tc[len(tc)-3]
	drop = sep == ';' || sep == '.' || sep == ','
	parts := strings.FieldsFunc(tc, func(r rune) bool { return r == ':' || r == ';' || r == '.' || r == ',' })
	if len(parts) != 4 {
		return 0, false, fmt.Errorf("not a timecode: %q", tc)
	}
	var v [4]int64
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 {
			return 0, false, fmt.Errorf("not a timecode: %q", tc)
		}
		v[i] = n
	}
	hh, mm, ss, ff := v[0], v[1], v[2], v[3]
	if mm > 59 || ss > 59 || ff >= int64(base) {
		return 0, false, fmt.Errorf("not a timecode at %d frames a second: %q", base, tc)
	}
	d := int64(dropFrames(base))
	if drop && d == 0 {
		return 0, false, fmt.Errorf("a drop-frame timecode at %d frames a second: %q", base, tc)
	}
	frames = ((hh*60+mm)*60+ss)*int64(base) + ff
	if drop {
		if ss == 0 && ff < d && mm%10 != 0 {
			return 0, false, fmt.Errorf("%q names a frame that drop-frame skips", tc)
		}
		minutes := hh*60 + mm
		frames -= d * (minutes - minutes/10)
	}
	return frames, drop, nil
}

// formatTimecode is frame count n from 00:00:00:00 as a timecode at base frames a second,
// wrapping at 24 hours as SMPTE does.
func formatTimecode(n int64, base int, drop bool) string {
	b := int64(base)
	d := int64(0)
	if drop {
		d = int64(dropFrames(base))
	}
	perDay := 24 * 3600 * b
	if d > 0 {
		perDay = 24 * 6 * (600*b - 9*d)
	}
	n %= perDay
	if n < 0 {
		n += perDay
	}
	if d > 0 {
		// Add back the labels skipped before n: 9 minutes of d in every ten, and the minutes so
		// far in this ten after the first.
		per10, perMin := 600*b-9*d, 60*b-d
		tens, rest := n/per10, n%per10
		n += 9 * d * tens
		if rest > d {
			n += d * ((rest - d) / perMin)
		}
	}
	sep := ":"
	if drop {
		sep = ";"
	}
	ff, s := n%b, n/b
	return fmt.Sprintf("%02d:%02d:%02d%s%02d", s/3600, s/60%60, s%60, sep, ff)
}

// TimecodeAt is the timecode of frame n of a video whose frame 0 is at tc, at rate fps: "" when
// tc is "" or does not read as a timecode at that rate.
func TimecodeAt(tc string, fps Rational, n int) string {
	base := timecodeRate(fps)
	start, drop, err := parseTimecode(tc, base)
	if tc == "" || err != nil {
		return ""
	}
	return formatTimecode(start+int64(n), base, drop)
}

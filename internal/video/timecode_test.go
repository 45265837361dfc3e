package video

import "testing"

func TestTimecodeAt(t *testing.T) {
	for _, c := range []struct {
		tc   string
		fps  Rational
		n    int
		want string
	}{
		{"01:00:00:00", Rational{25, 1}, 50, "01:00:02:00"},
		{"01:00:00:00", Rational{25, 1}, 0, "01:00:00:00"},
		{"00:59:59:24", Rational{25, 1}, 1, "01:00:00:00"},
		{"23:59:59:24", Rational{25, 1}, 2, "00:00:00:01"}, // wraps at 24 h
		{"10:00:00:00", Rational{24000, 1001}, 24, "10:00:01:00"},
		// Drop-frame at 29.97: the minute after 00:00:59;29 starts at ;02, every tenth at ;00.
		{"00:00:59;29", Rational{30000, 1001}, 1, "00:01:00;02"},
		{"00:09:59;29", Rational{30000, 1001}, 1, "00:10:00;00"},
		{"01:00:00;00", Rational{30000, 1001}, 17982, "01:10:00;00"}, // ten minutes of frames
		{"01:00:00;00", Rational{30000, 1001}, 1800, "01:01:00;02"},
		{"00:00:00;00", Rational{60000, 1001}, 3600, "00:01:00;04"},
		// Non-drop at 29.97 counts 30 labels every second.
		{"00:00:59:29", Rational{30000, 1001}, 1, "00:01:00:00"},
		{"", Rational{25, 1}, 5, ""},
		{"01:00:00:30", Rational{25, 1}, 0, ""},       // no frame 30 at 25 fps
		{"01:00:00;00", Rational{25, 1}, 0, ""},       // no drop-frame at 25 fps
		{"00:01:00;00", Rational{30000, 1001}, 0, ""}, // a label drop-frame skips
	} {
		if got := TimecodeAt(c.tc, c.fps, c.n); got != c.want {
			t.Errorf("TimecodeAt(%q, %s, %d) = %q, want %q", c.tc, c.fps, c.n, got, c.want)
		}
	}
	// Every frame count round-trips, drop-frame included, across an hour and a day's wrap.
	for _, base := range []int{25, 30, 60} {
		for _, drop := range []bool{false, true} {
			if drop && dropFrames(base) == 0 {
				continue
			}
			for _, n := range []int64{0, 1, 1799, 1800, 1801, 17981, 17982, 107891, 107892, 2159999} {
				s := formatTimecode(n, base, drop)
				back, d, err := parseTimecode(s, base)
				if err != nil || back != n || d != drop {
					t.Errorf("base %d drop %v: frame %d → %q → %d, %v, %v", base, drop, n, s, back, d, err)
				}
			}
		}
	}
}

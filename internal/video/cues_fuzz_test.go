package video

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// FuzzClipCues feeds the cue cutters a target's subtitles as anything at all (ffmpeg decodes
// them from the user's file, and passes text through as it is): they never panic, every cue they
// write lies inside the window and reads back, and what they write is cut already (cutting it
// again from its start changes nothing). The seeds are TestClipCues's SubRip and ASS files.
func FuzzClipCues(f *testing.F) {
	srt := "1\r\n00:00:00,000 --> 00:00:00,800\r\nends at the start\r\n\r\n" +
		"2\n00:00:00,500 --> 00:00:00,900\nacross the start\n\n" +
		"3\n00:00:00,900 --> 00:00:01,000 X1:10\ntwo\nlines\n\n" +
		"6\nbroken --> 00:00:01,000\nunreadable\n"
	ass := "[Script Info]\nScriptType: v4.00+\n\n[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n" +
		"Dialogue: 1,0:00:00.50,0:00:00.90,Top,,0,0,0,,{\\i1}across, with a comma{\\i0}\n" +
		"Dialogue: 0,0:00:01.10,0:00:01.50,Default,,0,0,0,,across the end\n"
	for _, s := range []string{srt, ass} {
		f.Add([]byte(s), uint32(800), uint32(400))
		f.Add([]byte(s), uint32(1100), uint32(0))
	}
	f.Add([]byte("1\n99999999:00:00,000 --> 99999999:00:01,000\nfar\n"), uint32(0), uint32(0))
	f.Fuzz(func(t *testing.T, data []byte, startMS, lenMS uint32) {
		for _, srtFormat := range []bool{true, false} {
			unit := 10 * time.Millisecond // ASS times are centiseconds
			if srtFormat {
				unit = time.Millisecond
			}
			win := Span{Start: time.Duration(startMS) * unit}
			if lenMS > 0 {
				win.End = win.Start + time.Duration(lenMS)*unit
			}
			clip, read := clipASS, assCueTimes
			if srtFormat {
				clip, read = clipSRT, srtCueTimes
			}
			out := clip(data, win)
			for _, c := range read(t, out) {
				if c[0] < 0 || c[1] <= c[0] || (win.End > 0 && c[1] > win.End-win.Start) {
					t.Fatalf("a cue at %v–%v cut to %v", c[0], c[1], win)
				}
			}
			// Line breaks are "\r\n" or "\n" to the cutters, which write "\n"; a lone '\r' is
			// text (of a blank line, or not) they keep: left out here, what they cut is a fixed point.
			plain := clip(bytes.ReplaceAll(data, []byte("\r"), nil), win)
			if again := clip(plain, Span{}); !bytes.Equal(again, plain) {
				t.Fatalf("cut again from its start:\n%q\nwas\n%q", again, plain)
			}
		}
	})
}

// TestCueTimesInRange: a cue time past what a time.Duration holds is unreadable (its cue left
// out), not wrapped round into the window.
func TestCueTimesInRange(t *testing.T) {
	srt := "1\n2562048:00:00,000 --> 2562048:00:01,000\nwrapped\n\n2\n999999:00:00,000 --> 999999:00:01,000\nlate\n"
	if got, want := string(clipSRT([]byte(srt), Span{Start: 999999 * time.Hour})), "1\n00:00:00,000 --> 00:00:01,000\nlate\n\n"; got != want {
		t.Errorf("SubRip cut from 999999 h: %q, want %q", got, want)
	}
	if _, ok := assTime("0:00:9223372036.00"); ok {
		t.Error("an ASS time past a time.Duration reads")
	}
}

// srtCueTimes are the times of every cue clipSRT wrote; a cue whose times do not read fails t.
func srtCueTimes(t *testing.T, out []byte) [][2]time.Duration {
	var cues [][2]time.Duration
	for _, block := range strings.Split(string(out), "\n\n") {
		lines := strings.Split(strings.Trim(block, "\n"), "\n")
		if len(lines) < 2 {
			continue // the empty text of the cue before
		}
		a, b, ok := strings.Cut(lines[1], " --> ")
		s, ok1 := srtTime(a)
		e, ok2 := srtTime(b)
		if !ok || !ok1 || !ok2 {
			t.Fatalf("written cue %q has no times that read", block)
		}
		cues = append(cues, [2]time.Duration{s, e})
	}
	return cues
}

// assCueTimes are the times of every Dialogue event clipASS wrote (it copies only those it read).
func assCueTimes(t *testing.T, out []byte) [][2]time.Duration {
	var cues [][2]time.Duration
	for _, l := range strings.Split(string(out), "\n") {
		body, ok := strings.CutPrefix(l, "Dialogue:")
		if !ok {
			continue
		}
		f := strings.SplitN(body, ",", 4)
		if len(f) < 4 {
			t.Fatalf("written event %q has too few fields", l)
		}
		s, ok1 := assTime(f[1])
		e, ok2 := assTime(f[2])
		if !ok1 || !ok2 {
			t.Fatalf("written event times in %q do not read", l)
		}
		cues = append(cues, [2]time.Duration{s, e})
	}
	return cues
}

package video

import (
	"testing"
	"time"
)

// Cues are cut to a window: those that overlap it are timed from its start and clipped to it,
// the others left out, in SubRip (milliseconds, renumbered) and ASS (centiseconds, the header
// and other lines kept); a window without an end keeps everything after its start.
func TestClipCues(t *testing.T) {
	ms := time.Millisecond
	win := Span{Start: 800 * ms, End: 1200 * ms}
	srt := "1\r\n00:00:00,000 --> 00:00:00,800\r\nends at the start\r\n\r\n" +
		"2\n00:00:00,500 --> 00:00:00,900\nacross the start\n\n" +
		"3\n00:00:00,900 --> 00:00:01,000 X1:10\ntwo\nlines\n\n" +
		"4\n00:00:01,100 --> 00:00:01,500\nacross the end\n\n" +
		"5\n00:00:01,200 --> 00:00:01,500\nstarts at the end\n\n" +
		"6\nbroken --> 00:00:01,000\nunreadable\n"
	want := "1\n00:00:00,000 --> 00:00:00,100\nacross the start\n\n" +
		"2\n00:00:00,100 --> 00:00:00,200\ntwo\nlines\n\n" +
		"3\n00:00:00,300 --> 00:00:00,400\nacross the end\n\n"
	if got := string(clipSRT([]byte(srt), win)); got != want {
		t.Errorf("SubRip cut to %v:\n%s\nwant\n%s", win, got, want)
	}
	open := Span{Start: 1100 * ms}
	if got, want := string(clipSRT([]byte(srt), open)), "1\n00:00:00,000 --> 00:00:00,400\nacross the end\n\n2\n00:00:00,100 --> 00:00:00,400\nstarts at the end\n\n"; got != want {
		t.Errorf("SubRip cut from 1.1 s:\n%s\nwant\n%s", got, want)
	}
	ass := "[Script Info]\nScriptType: v4.00+\n\n[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n" +
		"Dialogue: 0,0:00:00.00,0:00:00.30,Default,,0,0,0,,before\n" +
		"Dialogue: 1,0:00:00.50,0:00:00.90,Top,,0,0,0,,{\\i1}across, with a comma{\\i0}\n" +
		"Dialogue: 0,0:00:01.10,0:00:01.50,Default,,0,0,0,,across the end\n" +
		"Dialogue: 0,0:00:01.30,0:00:01.50,Default,,0,0,0,,after\n"
	wantASS := "[Script Info]\nScriptType: v4.00+\n\n[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n" +
		"Dialogue: 1,0:00:00.00,0:00:00.10,Top,,0,0,0,,{\\i1}across, with a comma{\\i0}\n" +
		"Dialogue: 0,0:00:00.30,0:00:00.40,Default,,0,0,0,,across the end\n"
	if got := string(clipASS([]byte(ass), win)); got != wantASS {
		t.Errorf("ASS cut to %v:\n%s\nwant\n%s", win, got, wantASS)
	}
}

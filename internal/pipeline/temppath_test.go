package pipeline

import "testing"

// IsTempPath recognises exactly the names TempPath makes beside an output: the only files
// beside an output a later run may remove.
func TestIsTempPath(t *testing.T) {
	out := "/data/out/talk.mp4"
	if p := TempPath(out, "part"); !IsTempPath(p, out) {
		t.Errorf("%s not recognised", p)
	}
	for _, p := range []string{
		out, "/data/out/.talk.mp4", "/data/out/talk.part-12.mp4", "/data/out/.talk.part-12.mkv",
		"/data/other/.talk.part-12.mp4", "/data/out/.talk.part-x1.mp4", "/data/out/.talk.part-.mp4",
		"/data/out/.talk..part-12.mp4", "/data/out/.talks.part-12.mp4",
	} {
		if IsTempPath(p, out) {
			t.Errorf("%s taken for a temp file of %s", p, out)
		}
	}
	// A rerun may spell the output another way: relative here, absolute there.
	dir := t.TempDir()
	t.Chdir(dir)
	if !IsTempPath(TempPath(dir+"/talk.mp4", "part"), "talk.mp4") || !IsTempPath(TempPath("talk.mp4", "part"), dir+"/./talk.mp4") {
		t.Error("the same temp file, spelt relative and absolute, not recognised")
	}
}

package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// FaceFusion's URLs for a model, in its provider order or the one asked for, or the site's
// mirror.
func TestModelURLs(t *testing.T) {
	m := catalog.Must("hyperswap_1a_256")
	gh := "https://github.com/facefusion/facefusion-assets/releases/download/models-3.3.0/hyperswap_1a_256.onnx"
	hf := "https://huggingface.co/facefusion/models-3.3.0/resolve/main/hyperswap_1a_256.onnx"
	hfm := "https://hf-mirror.com/facefusion/models-3.3.0/resolve/main/hyperswap_1a_256.onnx"
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{gh, hf, hfm}},
		{[]string{"--download-providers", "huggingface", "github", "--force"}, []string{hf, hfm, gh}},
		{[]string{"--download-providers=github"}, []string{gh}},
		{[]string{"--download-base-url", "http://mirror.site:8080/ff/models/"}, []string{"http://mirror.site:8080/ff/models/hyperswap_1a_256.onnx"}},
	} {
		d, rest, err := parseDownloadFlags(tc.args)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if got, untrusted := modelURLs(m, d); !slices.Equal(got, tc.want) || len(untrusted) != 0 {
			t.Errorf("%q: %q (%q left out), want %q", tc.args, got, untrusted, tc.want)
		}
		if slices.Contains(tc.args, "--force") && !slices.Equal(rest, []string{"--force"}) {
			t.Errorf("%q: run's flags left %q", tc.args, rest)
		}
	}
	for _, bad := range [][]string{
		{"--trust-mirror-crc32=yes"},
		{"--download-providers", "gitlab"},
		{"--download-providers"},
		{"--download-base-url", "/lustre/models"},
		{"--download-base-url", "http://m/", "--download-providers", "github"},
	} {
		if _, _, err := parseDownloadFlags(bad); err == nil || !strings.Contains(err.Error(), strings.Split(bad[0], "=")[0]) {
			t.Errorf("%q: %v, want an error naming the flag", bad, err)
		}
	}
}

// A model FaceFusion publishes no sha256 for is checked only by the CRC32 its host serves
// beside it: it comes from FaceFusion's own hosts, and from a mirror (hf-mirror.com, the site's)
// only with --trust-mirror-crc32; a job left with nowhere to fetch one from is refused before
// any download, naming the model and the flag.
func TestCRC32OnlyFromFaceFusion(t *testing.T) {
	m := catalog.Must("ghost_1_256")
	if m.Published.SHA256 != "" {
		t.Fatalf("ghost_1_256 has a published sha256 now: pick a model without one for this test")
	}
	gh := "https://github.com/facefusion/facefusion-assets/releases/download/models-3.0.0/ghost_1_256.onnx"
	hf := "https://huggingface.co/facefusion/models-3.0.0/resolve/main/ghost_1_256.onnx"
	hfm := "https://hf-mirror.com/facefusion/models-3.0.0/resolve/main/ghost_1_256.onnx"
	site := "http://mirror.site/ff/ghost_1_256.onnx"
	for _, tc := range []struct {
		args            []string
		want, untrusted []string
	}{
		{nil, []string{gh, hf}, []string{hfm}},
		{[]string{"--trust-mirror-crc32"}, []string{gh, hf, hfm}, nil},
		{[]string{"--download-providers", "huggingface"}, []string{hf}, []string{hfm}},
		{[]string{"--download-base-url", "http://mirror.site/ff"}, nil, []string{site}},
		{[]string{"--download-base-url", "http://mirror.site/ff", "--trust-mirror-crc32"}, []string{site}, nil},
	} {
		d, _, err := parseDownloadFlags(tc.args)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if got, untrusted := modelURLs(m, d); !slices.Equal(got, tc.want) || !slices.Equal(untrusted, tc.untrusted) {
			t.Errorf("%q: %q, %q left out; want %q, %q left out", tc.args, got, untrusted, tc.want, tc.untrusted)
		}
	}
	d, _, _ := parseDownloadFlags([]string{"--download-base-url", "http://mirror.site/ff"})
	_, err := downloadFiles([]string{"inswapper_128", "ghost_1_256", "crossface_ghost"}, d)
	if fault.KindOf(err) != fault.Usage || err == nil || !strings.Contains(err.Error(), "model ghost_1_256, crossface_ghost: no published sha256") ||
		!strings.Contains(err.Error(), "--trust-mirror-crc32") || strings.Contains(err.Error(), "inswapper_128") {
		t.Errorf("a site mirror for CRC32-only models: %v, want a usage error naming them and the flag", err)
	}
	if files, err := downloadFiles([]string{"inswapper_128"}, d); err != nil || len(files) != 1 || !slices.Equal(files[0].URLs, []string{"http://mirror.site/ff/inswapper_128.onnx"}) {
		t.Errorf("a site mirror for a model with a published sha256: %+v %v", files, err)
	}
}

// TestForceDownload fetches the real scrfd_2.5g from a site mirror on the loopback (a flat
// folder served over HTTP), with a model the mirror lacks beside it; then the rerun finds it
// verified, and `models` agrees.
func TestForceDownload(t *testing.T) {
	mirror := t.TempDir()
	if err := os.Symlink(testenv.SharedModel(t, "scrfd_2.5g.onnx"), filepath.Join(mirror, "scrfd_2.5g.onnx")); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(mirror)))
	defer srv.Close()
	models := filepath.Join(t.TempDir(), "models") // made by the command
	args := []string{"force-download", "--download-base-url", srv.URL + "/", "--models-dir", models,
		"--face-detector-model", "scrfd"}

	r := clitest.Run(t, append(args, "--face-landmarker-model", "2dfan4")...)
	missing := srv.URL + "/2dfan4.onnx"
	if r.Code != exitInternal || !strings.Contains(r.Stderr, "model 2dfan4") || !strings.Contains(r.Stderr, missing+": HTTP 404") {
		t.Fatalf("exit %d, want %d naming 2dfan4, its URL and the 404:\n%s%s", r.Code, exitInternal, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "scrfd_2.5g  downloaded") {
		t.Errorf("scrfd_2.5g not downloaded beside the failure:\n%s", r.Stdout)
	}
	if _, err := os.Stat(filepath.Join(models, "2dfan4.onnx")); err == nil {
		t.Error("2dfan4.onnx exists after a 404")
	}
	r = clitest.Run(t, args...)
	if r.Code != 0 || !strings.Contains(r.Stdout, "scrfd_2.5g  present") {
		t.Fatalf("rerun: exit %d, want scrfd_2.5g present:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// The job's landmarker is the embedded default's dlib_68, read from the same folder.
	if err := os.Symlink(testenv.Model(t, "shape_predictor_68_face_landmarks.dat"), filepath.Join(models, "shape_predictor_68_face_landmarks.dat")); err != nil {
		t.Fatal(err)
	}
	r = clitest.Run(t, "models", "--models-dir", models, "--face-detector-model", "scrfd")
	if r.Code != 0 || !strings.Contains(strings.Join(strings.Fields(r.Stdout), " "), "scrfd_2.5g needs verified ok 3295067") {
		t.Errorf("models: exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	// A file another force-download is fetching (its claim names a host this one cannot
	// check) is left to it: exit 5. A models folder that cannot take the file: exit 4, as when
	// the folder cannot be made.
	busy := filepath.Join(t.TempDir(), "models")
	os.MkdirAll(busy, 0o755)
	claim := `{"token":"77","host":"login9.other","pid":4242,"started":"2026-01-02T03:04:05Z","heartbeat":"2026-01-02T03:04:05Z"}`
	os.WriteFile(filepath.Join(busy, "scrfd_2.5g.onnx.part.lock"), []byte(claim), 0o644)
	r = clitest.Run(t, "force-download", "--download-base-url", srv.URL+"/", "--models-dir", busy, "--face-detector-model", "scrfd")
	if r.Code != exitBusy || !strings.Contains(r.Stdout, "scrfd_2.5g  busy") || !strings.Contains(r.Stderr, "another force-download (login9.other, pid 4242) is fetching scrfd_2.5g.onnx") {
		t.Errorf("claimed elsewhere: exit %d, want %d naming the holder:\n%s%s", r.Code, exitBusy, r.Stdout, r.Stderr)
	}
	unwritable := filepath.Join(t.TempDir(), "models")
	os.MkdirAll(filepath.Join(unwritable, "scrfd_2.5g.onnx.part"), 0o755)
	r = clitest.Run(t, "force-download", "--download-base-url", srv.URL+"/", "--models-dir", unwritable, "--face-detector-model", "scrfd")
	if r.Code != exitEnvironment || !strings.Contains(r.Stderr, "fix the models folder") {
		t.Errorf("a part that cannot be written: exit %d, want %d:\n%s%s", r.Code, exitEnvironment, r.Stdout, r.Stderr)
	}
	// The embedded default's reference mode needs fr_feature, which `make fetch` brings.
	r = clitest.Run(t, "force-download", "--download-base-url", srv.URL+"/", "--models-dir", t.TempDir(), "--face-selector-mode", "reference")
	if r.Code != 0 || !strings.Contains(r.Stdout, "fr_feature (npm faceplugin-face-recognition-js@0.0.1), from `make fetch`") {
		t.Errorf("embedded default, reference mode: exit %d, want 0 naming fr_feature's package:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// The bounds of a slow download: their defaults are the library's and the usage text's; bad
// values are refused naming the flag.
func TestDownloadBoundFlags(t *testing.T) {
	d, rest, err := parseDownloadFlags([]string{"--force"})
	if err != nil || len(rest) != 1 || d.minRate != 10 || d.rateWindow != time.Minute || d.timeout != 2*time.Hour {
		t.Fatalf("defaults: %+v %q %v", d, rest, err)
	}
	for _, line := range []string{"--download-min-rate KIB_PER_S]                     abandon a try averaging less (default 10;",
		"each window of this (default 60)", "every URL and try (default 7200)"} {
		if !strings.Contains(usage, line) {
			t.Errorf("the usage text does not say %q", line)
		}
	}
	d, _, err = parseDownloadFlags([]string{"--download-min-rate", "0.5", "--download-rate-window=2.5", "--download-timeout", "30"})
	if f := d.fetcher(nil); err != nil || f.MinRate != 512 || f.RateWindow != 2500*time.Millisecond || f.Deadline != 30*time.Second {
		t.Errorf("given: %+v %v", f, err)
	}
	if d, _, _ = parseDownloadFlags([]string{"--download-min-rate=0"}); d.fetcher(nil).MinRate >= 0 {
		t.Error("--download-min-rate 0 leaves a floor")
	}
	for _, bad := range [][]string{
		{"--download-min-rate", "-1"}, {"--download-min-rate", "fast"}, {"--download-min-rate"},
		{"--download-rate-window", "0"}, {"--download-timeout", "NaN"}, {"--download-timeout", "1e12"},
	} {
		if _, _, err := parseDownloadFlags(bad); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%q: %v, want an error naming the flag", bad, err)
		}
	}
}

// force-download through the binary against hostile hosts and folders: a trickling host ends in
// bounded time, naming the file, the host, the rate and the flag (exit 1); a redirect to file://
// is refused, not retried; a models folder anyone can write into is refused in one line before
// any request (exit 4), as one given to another user (nobody, uid 65534, as the tests run as
// root) is.
func TestForceDownloadHostile(t *testing.T) {
	var mu sync.Mutex
	asked := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mode, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		mu.Lock()
		asked[mode]++
		mu.Unlock()
		if mode == "file" {
			http.Redirect(w, r, "file:///etc/shadow", http.StatusFound)
			return
		}
		w.Header().Set("Content-Length", "3295067")
		w.(http.Flusher).Flush()
		for {
			select {
			case <-time.After(100 * time.Millisecond):
				w.Write([]byte{0})
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	count := func(mode string) int {
		mu.Lock()
		defer mu.Unlock()
		return asked[mode]
	}
	models := filepath.Join(t.TempDir(), "models")
	args := func(mode string, dir string, extra ...string) []string {
		return append([]string{"force-download", "--download-base-url", srv.URL + "/" + mode + "/", "--models-dir", dir, "--face-detector-model", "scrfd"}, extra...)
	}

	// --download-timeout 60 is a hang guard, not a speed assert: were the rate floor broken, the
	// deadline would end the run instead, and the line below would not name the floor.
	r := clitest.Run(t, args("trickle", models, "--download-min-rate", "1", "--download-rate-window", "0.5", "--download-timeout", "60")...)
	if r.Code != exitInternal || !strings.Contains(r.Stderr, "scrfd_2.5g.onnx from "+host+" came at ") || !strings.Contains(r.Stderr, "bytes/s over the last 500ms, below --download-min-rate 1.0 KiB/s") {
		t.Errorf("trickle: exit %d, want %d naming the file, host, rate and flag:\n%s%s", r.Code, exitInternal, r.Stdout, r.Stderr)
	}
	r = clitest.Run(t, args("trickle", models, "--download-min-rate", "0", "--download-timeout", "1")...)
	if r.Code != exitInternal || !strings.Contains(r.Stderr, "scrfd_2.5g.onnx from "+host+" not finished within --download-timeout 1s") {
		t.Errorf("deadline: exit %d, want %d naming the timeout:\n%s%s", r.Code, exitInternal, r.Stdout, r.Stderr)
	}

	r = clitest.Run(t, args("file", models)...)
	if r.Code != exitInternal || !strings.Contains(r.Stderr, `redirects to a non-HTTP URL, "file:///etc/shadow": refused`) || strings.Contains(r.Stderr, "check the network") {
		t.Errorf("file:// redirect: exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if count("file") != 1 {
		t.Errorf("the redirecting host was asked %d times, want 1", count("file"))
	}

	scratch := filepath.Join(t.TempDir(), "scratch")
	os.Mkdir(scratch, 0o700)
	syscall.Chmod(scratch, 0o1777) // scratch: sticky and world-writable
	theirs := filepath.Join(t.TempDir(), "theirs")
	os.Mkdir(theirs, 0o755)
	testenv.GiveToNobody(t, theirs)
	for dir, want := range map[string]string{scratch: "is writable by every user (mode 1777)", theirs: "belongs to user nobody (uid 65534)"} {
		before := count("trickle")
		r = clitest.Run(t, args("trickle", dir)...)
		lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
		if r.Code != exitEnvironment || len(lines) != 1 || !strings.Contains(r.Stderr, "models folder "+dir+" "+want) {
			t.Errorf("%s: exit %d, want %d and one line saying %q:\n%s%s", dir, r.Code, exitEnvironment, want, r.Stdout, r.Stderr)
		}
		if count("trickle") != before {
			t.Errorf("%s: a request was made for a refused folder", dir)
		}
	}
}

// TestDeepSwapperURLs: a deep_swapper model comes from its scope's Hugging Face repository alone,
// under its file's own name (FaceFusion's resolve_download_url_by_provider), and only with
// --trust-mirror-crc32 from the mirror, since FaceFusion publishes no sha256 for it.
func TestDeepSwapperURLs(t *testing.T) {
	m := catalog.Must("iperov/elon_musk_224")
	d, _, err := parseDownloadFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	got, untrusted := modelURLs(m, d)
	want := []string{"https://huggingface.co/facefusion/deepfacelive-models-iperov/resolve/main/elon_musk_224.dfm"}
	if !slices.Equal(got, want) || !slices.Equal(untrusted, []string{"https://hf-mirror.com/facefusion/deepfacelive-models-iperov/resolve/main/elon_musk_224.dfm"}) {
		t.Errorf("URLs %q (left out %q), want %q", got, untrusted, want)
	}
	files, err := downloadFiles([]string{m.Name}, d)
	if err != nil || len(files) != 1 || files[0].File != "elon_musk_224.dfm" || files[0].HashFile != "elon_musk_224.hash" {
		t.Errorf("download file %+v, %v: want elon_musk_224.dfm and .hash (in the iperov folder)", files, err)
	}
}

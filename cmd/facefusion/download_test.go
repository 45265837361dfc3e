package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer/catalog"
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
		if got := modelURLs(m, d); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.args, got, tc.want)
		}
		if slices.Contains(tc.args, "--force") && !slices.Equal(rest, []string{"--force"}) {
			t.Errorf("%q: run's flags left %q", tc.args, rest)
		}
	}
	for _, bad := range [][]string{
		{"--download-providers", "gitlab"},
		{"--download-providers"},
		{"--download-base-url", "/lustre/models"},
		{"--download-base-url", "http://m/", "--download-providers", "github"},
	} {
		if _, _, err := parseDownloadFlags(bad); err == nil || !strings.Contains(err.Error(), "--download-") {
			t.Errorf("%q: %v, want an error naming the flag", bad, err)
		}
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

	r := facefusion(t, append(args, "--face-landmarker-model", "2dfan4")...)
	missing := srv.URL + "/2dfan4.onnx"
	if r.code != exitInternal || !strings.Contains(r.stderr, "model 2dfan4") || !strings.Contains(r.stderr, missing+": HTTP 404") {
		t.Fatalf("exit %d, want %d naming 2dfan4, its URL and the 404:\n%s%s", r.code, exitInternal, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "scrfd_2.5g  downloaded") {
		t.Errorf("scrfd_2.5g not downloaded beside the failure:\n%s", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(models, "2dfan4.onnx")); err == nil {
		t.Error("2dfan4.onnx exists after a 404")
	}
	r = facefusion(t, args...)
	if r.code != 0 || !strings.Contains(r.stdout, "scrfd_2.5g  present") {
		t.Fatalf("rerun: exit %d, want scrfd_2.5g present:\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = facefusion(t, "models", "--models-dir", models, "--face-detector-model", "scrfd")
	if r.code != 0 || !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), "scrfd_2.5g needs verified 3295067") {
		t.Errorf("models: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

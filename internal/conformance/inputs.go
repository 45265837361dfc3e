package conformance

import (
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	_ "github.com/facefusion-hpc/facefusion/internal/jpeg" // raster.Load decodes JPEG samples as cv2.imread
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// makeInputs writes every case's source, voice and target into dir, each file once (cases share
// them), several at once: most are an image decoded, transformed and encoded, or an ffmpeg run.
// An error names the case that asked for the file.
func makeInputs(dir, samples string, cases []Case) error {
	type file struct {
		c    *Case
		make func() error
	}
	var files []file
	seen := map[string]bool{}
	add := func(c *Case, name string, make func() error) {
		if !seen[name] {
			seen[name] = true
			files = append(files, file{c, make})
		}
	}
	for i := range cases {
		c := &cases[i]
		if c.SourceTransform != "" {
			add(c, sourceName(c), func() error { return makeSource(dir, samples, c) })
		}
		if c.Voice > 0 {
			add(c, voiceName(c), func() error { return makeVoice(dir, c) })
		}
		add(c, inputName(c), func() error { _, err := makeInput(dir, samples, c); return err })
	}
	errs := make([]error, len(files))
	eachAtOnce(len(files), func(i int) {
		if err := files[i].make(); err != nil {
			errs[i] = fmt.Errorf("%s: case %q: %v", files[i].c.File, files[i].c.Name, err)
		}
	})
	return errors.Join(errs...)
}

// eachAtOnce calls f(0) … f(n-1), as many at once as there are cores.
func eachAtOnce(n int, f func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(n, runtime.NumCPU()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// inputName is the file both sides read as a case's target: the sample, transformed, as PNG
// (a video case: a clip made from it).
func inputName(c *Case) string {
	base := strings.TrimSuffix(c.Target, filepath.Ext(c.Target))
	if c.Transform != "" {
		base += "-" + strings.NewReplacer(":", "-", ",", "-").Replace(c.Transform)
	}
	if c.Compare == CompareVideo {
		if c.Gap != nil {
			base += fmt.Sprintf("-gap%d", *c.Gap)
		}
		return fmt.Sprintf("%s-%df.mov", base, c.FrameCount())
	}
	if strings.HasPrefix(c.Transform, "jpeg:") {
		return base + ".jpg"
	}
	return base + ".png"
}

// transformImage applies a case's transform to img.
func transformImage(img *raster.Image, t string) (*raster.Image, error) {
	name, crop, err := transformOf(t)
	if err != nil {
		return nil, err
	}
	at := func(x, y int) []uint8 {
		i := y*img.Stride + 3*x
		return img.Pix[i : i+3]
	}
	var out *raster.Image
	switch name {
	case "", "jpeg": // jpeg: the pixels as they are, written as JPEG by makeInput
		return img.Clone(), nil
	case "mirror":
		out = raster.New(img.W, img.H)
		for y := range img.H {
			for x := range img.W {
				put(out, x, y, at(img.W-1-x, y))
			}
		}
	case "rotate180":
		out = raster.New(img.W, img.H)
		for y := range img.H {
			for x := range img.W {
				put(out, x, y, at(img.W-1-x, img.H-1-y))
			}
		}
	case "rotate90", "rotate270": // counter-clockwise, as cv2.ROTATE_90_COUNTERCLOCKWISE
		out = raster.New(img.H, img.W)
		for y := range out.H {
			for x := range out.W {
				if name == "rotate90" {
					put(out, x, y, at(img.W-1-y, x))
				} else {
					put(out, x, y, at(y, img.H-1-x))
				}
			}
		}
	case "dark":
		out = img.Clone()
		for i := range out.Pix {
			out.Pix[i] /= 4
		}
	case "pair":
		// The target at 5/8 beside itself at 1/2 (nearest pixel), bottom-aligned on black: two
		// faces of different size, place and score, in a frame the detectors need not shrink.
		lw, lh, rw, rh := img.W*5/8, img.H*5/8, img.W/2, img.H/2
		out = raster.New(lw+rw, lh)
		for y := range lh {
			for x := range lw {
				put(out, x, y, at(x*8/5, y*8/5))
			}
		}
		for y := range rh {
			for x := range rw {
				put(out, lw+x, lh-rh+y, at(x*2, y*2))
			}
		}
	case "twin":
		// The target beside its mirror image: twice as wide, so the detectors shrink it.
		out = raster.New(2*img.W, img.H)
		for y := range img.H {
			for x := range img.W {
				put(out, x, y, at(x, y))
				put(out, 2*img.W-1-x, y, at(x, y))
			}
		}
	case "crop":
		x0, y0, w, h := crop[0], crop[1], crop[2], crop[3]
		if x0+w > img.W || y0+h > img.H {
			return nil, fmt.Errorf("transform %q: the crop leaves the %dx%d image", t, img.W, img.H)
		}
		out = raster.New(w, h)
		for y := range h {
			for x := range w {
				put(out, x, y, at(x0+x, y0+y))
			}
		}
	}
	return out, nil
}

// put sets out's pixel (x, y) to the RGB of p.
func put(out *raster.Image, x, y int, p []uint8) {
	i := y*out.Stride + 3*x
	copy(out.Pix[i:i+3], p)
}

// writePNG writes img as an 8-bit RGB PNG (through NRGBA, opaque).
func writePNG(path string, img *raster.Image) error {
	n := image.NewNRGBA(image.Rect(0, 0, img.W, img.H))
	for y := range img.H {
		for x := range img.W {
			i, j := y*img.Stride+3*x, y*n.Stride+4*x
			copy(n.Pix[j:j+3], img.Pix[i:i+3])
			n.Pix[j+3] = 255
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, n); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// voiceName is the voice track both sides read for a case with voice: a stereo 44.1 kHz WAV
// (ffmpeg resamples it to FaceFusion's 48 kHz) of Voice seconds.
func voiceName(c *Case) string { return fmt.Sprintf("voice-%dms.wav", int(c.Voice*1000)) }

// makeVoice writes the case's voice track into dir (once per name), generated by ffmpeg: a
// 220 Hz tone whose loudness swells 3 times a second on the left, pink noise on the right, so
// that consecutive frames' windows differ and the channels' mean matters.
func makeVoice(dir string, c *Case) error {
	if c.Voice == 0 {
		return nil
	}
	path := filepath.Join(dir, voiceName(c))
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	d := fmt.Sprintf("%.3f", c.Voice)
	cmd := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-y",
		"-f", "lavfi", "-i", "sine=frequency=220:sample_rate=44100:duration="+d,
		"-f", "lavfi", "-i", "anoisesrc=d="+d+":c=pink:r=44100:a=0.3:seed=11",
		"-filter_complex", "[0:a]volume='0.2+0.6*abs(sin(3*PI*t))':eval=frame,aformat=sample_fmts=fltp:channel_layouts=mono[l];"+
			"[1:a]aformat=sample_fmts=fltp:channel_layouts=mono[r];[l][r]join=inputs=2:channel_layout=stereo[a]",
		"-map", "[a]", "-c:a", "pcm_s16le", path+".part.wav")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("voice %s: ffmpeg: %v: %s", voiceName(c), err, out)
	}
	return os.Rename(path+".part.wav", path)
}

// sourceName is the file both sides read as a case's transformed source (source_transform).
func sourceName(c *Case) string {
	base := strings.TrimSuffix(c.Source, filepath.Ext(c.Source))
	return "source-" + base + "-" + strings.NewReplacer(":", "-", ",", "-").Replace(c.SourceTransform) + ".png"
}

// makeSource writes the case's transformed source into dir (once per name); a case without
// source_transform reads the sample itself.
func makeSource(dir, samples string, c *Case) error {
	if c.SourceTransform == "" {
		return nil
	}
	path := filepath.Join(dir, sourceName(c))
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	img, err := raster.Load(filepath.Join(samples, c.Source))
	if err != nil {
		return fmt.Errorf("source %s: %v", c.Source, err)
	}
	if img, err = transformImage(img, c.SourceTransform); err != nil {
		return err
	}
	return writePNG(path, img)
}

// makeInput writes the case's target into dir (once per input name) and returns its path.
func makeInput(dir, samples string, c *Case) (string, error) {
	path := filepath.Join(dir, inputName(c))
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	img, err := raster.Load(filepath.Join(samples, c.Target))
	if err != nil {
		return "", fmt.Errorf("target %s: %v", c.Target, err)
	}
	if img, err = transformImage(img, c.Transform); err != nil {
		return "", err
	}
	png := path
	if c.Compare == CompareVideo || strings.HasPrefix(c.Transform, "jpeg:") {
		png = strings.TrimSuffix(path, filepath.Ext(path)) + ".png"
	}
	if err := writePNG(png, img); err != nil {
		return "", err
	}
	if q, ok := strings.CutPrefix(c.Transform, "jpeg:"); ok {
		// A JPEG target as cameras write them: 4:2:0, full range, the given quantiser.
		cmd := exec.Command("ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-i", png,
			"-pix_fmt", "yuvj420p", "-q:v", q, "-frames:v", "1", "-update", "1", path)
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("transform %s: ffmpeg: %v: %s", c.Transform, err, out)
		}
	}
	if c.Compare == CompareVideo {
		gap := -1
		if c.Gap != nil {
			gap = *c.Gap
		}
		if err := makeClip(png, path, c.FrameCount(), gap, img.W, img.H); err != nil {
			return "", err
		}
	}
	return path, nil
}

// makeClip pans a window of the image by (3, 2) px a frame into a lossless clip (PNG frames,
// RGB, in .mov: FaceFusion wants the output's extension to be the target's, and .mov takes
// rawvideo), so both sides decode the very same pixels. Frame gap (unless -1) is made black.
func makeClip(png, out string, frames, gap, w, h int) error {
	cw, ch := (w-3*frames)&^1, (h-2*frames)&^1
	vf := fmt.Sprintf("crop=%d:%d:3*n:2*n,format=rgb24", cw, ch)
	if gap >= 0 {
		vf += fmt.Sprintf(",drawbox=x=0:y=0:w=iw:h=ih:color=black:t=fill:enable='eq(n,%d)'", gap)
	}
	cmd := exec.Command("ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
		"-loop", "1", "-framerate", "25", "-i", png,
		"-vf", vf,
		"-frames:v", fmt.Sprint(frames), "-c:v", "png", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("making the clip %s: %v: %s", out, err, b)
	}
	return nil
}

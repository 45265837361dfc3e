// Package jpeg reads and writes JPEG files with the system's libjpeg through cgo, kept out of
// package raster so that raster and what uses it build without libjpeg: importing this package
// gives raster.Load its JPEG decoder (see raster.RegisterJPEG).
package jpeg

// JPEG files are decoded by the system's libjpeg (libjpeg-turbo), the library FaceFusion's
// cv2.imread uses, with the settings OpenCV leaves at their defaults (ISLOW integer IDCT, fancy
// upsampling, the library's YCbCr tables), so a source or target gives FaceFusion's pixels bit
// for bit; no pure-Go decoder reproduces those three steps.

/*
#cgo LDFLAGS: -ljpeg
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>

typedef struct {
	struct jpeg_error_mgr pub;
	jmp_buf jump;
	char msg[JMSG_LENGTH_MAX];
} ffjpeg_err;

static void ffjpeg_exit(j_common_ptr c) {
	ffjpeg_err *e = (ffjpeg_err *)c->err;
	(*c->err->format_message)(c, e->msg);
	longjmp(e->jump, 1);
}

// Warnings (corrupt data the library recovers from) are silent, as in OpenCV.
static void ffjpeg_message(j_common_ptr c) { (void)c; }

typedef struct {
	unsigned char *pix;   // w*h*comps samples, malloc'd
	int w, h, comps;
	unsigned char *exif;  // APP1 payload after "Exif\0\0", malloc'd, or NULL
	unsigned int exif_len;
	char msg[JMSG_LENGTH_MAX];
} ffjpeg_result;

static int ffjpeg_decode(const unsigned char *data, unsigned long size, ffjpeg_result *r) {
	struct jpeg_decompress_struct cinfo;
	ffjpeg_err err;
	volatile JSAMPROW row = NULL;
	memset(r, 0, sizeof(*r));
	cinfo.err = jpeg_std_error(&err.pub);
	err.pub.error_exit = ffjpeg_exit;
	err.pub.output_message = ffjpeg_message;
	err.msg[0] = 0;
	if (setjmp(err.jump)) {
		strncpy(r->msg, err.msg, sizeof(r->msg) - 1);
		jpeg_destroy_decompress(&cinfo);
		free(r->pix);
		free(r->exif);
		r->pix = NULL;
		r->exif = NULL;
		return 1;
	}
	jpeg_create_decompress(&cinfo);
	jpeg_mem_src(&cinfo, data, size);
	jpeg_save_markers(&cinfo, JPEG_APP0 + 1, 0xffff);
	jpeg_read_header(&cinfo, TRUE);
	for (jpeg_saved_marker_ptr m = cinfo.marker_list; m; m = m->next) {
		if (m->marker == JPEG_APP0 + 1 && m->data_length > 6 && memcmp(m->data, "Exif\0\0", 6) == 0 && !r->exif) {
			r->exif_len = m->data_length - 6;
			r->exif = malloc(r->exif_len);
			if (r->exif) memcpy(r->exif, m->data + 6, r->exif_len);
		}
	}
	if (cinfo.num_components != 1 && cinfo.num_components != 3) {
		snprintf(r->msg, sizeof(r->msg), "a %d-component (CMYK or YCCK) JPEG is not supported: convert it to RGB", cinfo.num_components);
		jpeg_destroy_decompress(&cinfo);
		free(r->exif);
		r->exif = NULL;
		return 1;
	}
	cinfo.out_color_space = JCS_RGB;
	r->comps = 3;
	jpeg_start_decompress(&cinfo);
	r->w = cinfo.output_width;
	r->h = cinfo.output_height;
	size_t stride = (size_t)r->w * r->comps;
	r->pix = malloc(stride * r->h);
	if (!r->pix) {
		strcpy(r->msg, "out of memory");
		jpeg_destroy_decompress(&cinfo);
		free(r->exif);
		r->exif = NULL;
		return 1;
	}
	while (cinfo.output_scanline < cinfo.output_height) {
		row = r->pix + stride * cinfo.output_scanline;
		JSAMPROW rows[1] = { row };
		jpeg_read_scanlines(&cinfo, rows, 1);
	}
	jpeg_finish_decompress(&cinfo);
	jpeg_destroy_decompress(&cinfo);
	return 0;
}

typedef struct {
	unsigned char *out;  // malloc'd by libjpeg's memory destination
	unsigned long size;
	char msg[JMSG_LENGTH_MAX];
} ffjpeg_encoded;

static int ffjpeg_encode(const unsigned char *rgb, int w, int h, int quality, ffjpeg_encoded *r) {
	struct jpeg_compress_struct cinfo;
	ffjpeg_err err;
	memset(r, 0, sizeof(*r));
	cinfo.err = jpeg_std_error(&err.pub);
	err.pub.error_exit = ffjpeg_exit;
	err.pub.output_message = ffjpeg_message;
	if (setjmp(err.jump)) {
		strncpy(r->msg, err.msg, sizeof(r->msg) - 1);
		jpeg_destroy_compress(&cinfo);
		free(r->out);
		r->out = NULL;
		return 1;
	}
	jpeg_create_compress(&cinfo);
	jpeg_mem_dest(&cinfo, &r->out, &r->size);
	cinfo.image_width = w;
	cinfo.image_height = h;
	cinfo.input_components = 3;
	cinfo.in_color_space = JCS_RGB;
	jpeg_set_defaults(&cinfo);
	jpeg_set_quality(&cinfo, quality, TRUE);
	jpeg_start_compress(&cinfo, TRUE);
	while (cinfo.next_scanline < cinfo.image_height) {
		JSAMPROW row = (JSAMPROW)(rgb + (size_t)cinfo.next_scanline * w * 3);
		jpeg_write_scanlines(&cinfo, &row, 1);
	}
	jpeg_finish_compress(&cinfo);
	jpeg_destroy_compress(&cinfo);
	return 0;
}
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"unsafe"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

func init() { raster.RegisterJPEG(Decode) }

// Decode decodes a JPEG file's bytes as cv2.imread(path, IMREAD_COLOR) does: RGB out of
// libjpeg (greyscale replicated), then the EXIF orientation applied; CMYK is refused.
func Decode(data []byte) (*raster.Image, error) {
	if len(data) == 0 {
		return nil, errors.New("empty file")
	}
	cdata := C.CBytes(data)
	defer C.free(cdata)
	var r C.ffjpeg_result
	if C.ffjpeg_decode((*C.uchar)(cdata), C.ulong(len(data)), &r) != 0 {
		return nil, errors.New(C.GoString(&r.msg[0]))
	}
	defer C.free(unsafe.Pointer(r.pix))
	defer C.free(unsafe.Pointer(r.exif))
	w, h, comps := int(r.w), int(r.h), int(r.comps)
	src := unsafe.Slice((*uint8)(unsafe.Pointer(r.pix)), w*h*comps)
	img := raster.New(w, h)
	copy(img.Pix, src)
	orientation := 1
	if r.exif != nil {
		orientation = exifOrientation(unsafe.Slice((*uint8)(unsafe.Pointer(r.exif)), int(r.exif_len)))
	}
	return orient(img, orientation), nil
}

// exifOrientation reads tag 0x0112 of IFD0 from a TIFF-structured EXIF block; 1 (as stored)
// when it is absent or unreadable.
func exifOrientation(b []byte) int {
	if len(b) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(b[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	ifd := int(bo.Uint32(b[4:8]))
	if ifd < 8 || ifd+2 > len(b) {
		return 1
	}
	n := int(bo.Uint16(b[ifd:]))
	for i := 0; i < n; i++ {
		e := ifd + 2 + 12*i
		if e+12 > len(b) {
			return 1
		}
		if bo.Uint16(b[e:]) != 0x0112 {
			continue
		}
		var v int
		switch bo.Uint16(b[e+2:]) {
		case 3: // SHORT
			v = int(bo.Uint16(b[e+8:]))
		case 4: // LONG
			v = int(bo.Uint32(b[e+8:]))
		default:
			return 1
		}
		if v < 1 || v > 8 {
			return 1
		}
		return v
	}
	return 1
}

// orient applies an EXIF orientation the way OpenCV's ApplyExifOrientation does (flips and a
// transpose, so the image is shown upright).
func orient(img *raster.Image, o int) *raster.Image {
	if o <= 1 || o > 8 {
		return img
	}
	// For each output pixel, the source pixel: transposed for 5..8, then flipped.
	transpose := o >= 5
	var flipX, flipY bool
	switch o {
	case 2, 6:
		flipX = true
	case 3, 7:
		flipX, flipY = true, true
	case 4, 8:
		flipY = true
	}
	w, h := img.W, img.H
	if transpose {
		w, h = h, w
	}
	out := raster.New(w, h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			sx, sy := x, y
			if flipX {
				sx = w - 1 - x
			}
			if flipY {
				sy = h - 1 - y
			}
			if transpose {
				sx, sy = sy, sx
			}
			i := y*out.Stride + 3*x
			j := sy*img.Stride + 3*sx
			copy(out.Pix[i:i+3], img.Pix[j:j+3])
		}
	}
	return out
}

// Encode encodes img as cv2.imwrite(path, frame) writes a .jpg with its default parameters:
// libjpeg's defaults (JFIF, 4:2:0, ISLOW forward DCT, standard Huffman tables) at the given
// quality, 95 being OpenCV's default.
func Encode(img *raster.Image, quality int) ([]byte, error) {
	if img.W <= 0 || img.H <= 0 {
		return nil, errors.New("encoding an empty image as JPEG")
	}
	pix := C.CBytes(img.Bytes())
	defer C.free(pix)
	var r C.ffjpeg_encoded
	if C.ffjpeg_encode((*C.uchar)(pix), C.int(img.W), C.int(img.H), C.int(quality), &r) != 0 {
		return nil, errors.New("encoding JPEG: " + C.GoString(&r.msg[0]))
	}
	defer C.free(unsafe.Pointer(r.out))
	return C.GoBytes(unsafe.Pointer(r.out), C.int(r.size)), nil
}

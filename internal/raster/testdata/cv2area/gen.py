# Writes the goldens TestResizeAreaMatchesOpenCV and TestResizeCubicMatchesOpenCV hold
# ResizeArea and ResizeCubic to: a seeded random RGB source shrunk with INTER_AREA to the sizes
# below (whole-number and other ratios, as FaceFusion's match_frame_color and
# normalize_extend_frame ask), as PNG, and the float32 differences of two such sources grown
# with INTER_CUBIC, as raw little-endian float32 (.f32, with the size in the name). Run with
# Debian's python3 and python3-opencv (4.6) from this folder.
import cv2
import numpy

rng = numpy.random.default_rng(29)
src = rng.integers(0, 256, (96, 96, 3), dtype = numpy.uint8)
src[48:, :48] = numpy.linspace(0, 255, 48, dtype = numpy.uint8)[numpy.newaxis, :, numpy.newaxis]
cv2.imwrite('src.png', src)
for w, h in [ (64, 64), (33, 33), (16, 16), (8, 8), (67, 43), (2, 2), (95, 90), (48, 48) ]:
	cv2.imwrite('area-%dx%d.png' % (w, h), cv2.resize(src, (w, h), interpolation = cv2.INTER_AREA))
for s in [ 4, 11, 33 ]:
	small = cv2.resize(src, (s, s), interpolation = cv2.INTER_AREA).astype(numpy.float32) - cv2.resize(src[::-1], (s, s), interpolation = cv2.INTER_AREA).astype(numpy.float32)
	small.astype('<f4').tofile('diff-%d.f32' % s)
	cv2.resize(small, (96, 96), interpolation = cv2.INTER_CUBIC).astype('<f4').tofile('cubic-%d-96.f32' % s)
# GaussianBlur8: cv2.GaussianBlur on 8 bits at deep_swapper's sigma 2 and at 0.8.
for sigma in [ 2, 0.8 ]:
	cv2.imwrite('gauss-%g.png' % sigma, cv2.GaussianBlur(src, (0, 0), sigma))
# ResizeCubic8: INTER_CUBIC on 8 bits, as FaceFusion grows edtalk's output: twice the size (a
# row a multiple of eight values: OpenCV's float path) and an odd size (its integer tail too).
for w, h in [ (192, 192), (101, 77) ]:
	cv2.imwrite('cubic8-%dx%d.png' % (w, h), cv2.resize(src, (w, h), interpolation = cv2.INTER_CUBIC))

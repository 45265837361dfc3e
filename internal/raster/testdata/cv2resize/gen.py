# Writes the cv2.resize (INTER_LINEAR) goldens TestResizeMatchesOpenCV holds Resizer to:
# two seeded random RGB sources and each one resized to the sizes below, as PNG. Run with
# Debian's python3 and python3-opencv (4.6) from this folder.
import cv2
import numpy

sizes = {
	'a': ((61, 47), [(40, 30), (37, 29), (30, 23), (16, 9), (8, 8), (5, 47), (61, 20), (122, 94), (100, 71), (3, 2), (1, 1), (64, 64)]),
	'b': ((128, 64), [(80, 40), (64, 32), (100, 50), (40, 20), (48, 24), (160, 80), (127, 63), (32, 11), (256, 128)]),
}
rng = numpy.random.default_rng(25)
for name, ((w, h), outs) in sizes.items():
	src = rng.integers(0, 256, (h, w, 3), dtype = numpy.uint8)
	# smooth areas too, where the rounding of the weights decides the level
	src[h // 2:, :w // 2] = numpy.linspace(0, 255, w // 2, dtype = numpy.uint8)[numpy.newaxis, :, numpy.newaxis]
	cv2.imwrite(name + '.png', src)
	for dw, dh in outs:
		cv2.imwrite('%s-%dx%d.png' % (name, dw, dh), cv2.resize(src, (dw, dh)))

# Writes the goldens TestHistogramDifferenceMatchesOpenCV holds HistogramDifference and hsv8 to:
# two seeded random images (one smooth, one of full range) as PNG, the first one's
# cv2.cvtColor BGR2HSV (raw uint8, .u8) and FaceFusion's calculate_histogram_difference of the
# pair (factor.txt). Run with Debian's python3 and python3-opencv (4.6) from this folder.
import cv2
import numpy

rng = numpy.random.default_rng(31)
a = rng.integers(0, 256, (40, 37, 3), dtype = numpy.uint8)
a[20:, :] = numpy.linspace(0, 255, 37, dtype = numpy.uint8)[numpy.newaxis, :, numpy.newaxis]
b = cv2.GaussianBlur(rng.integers(0, 256, (40, 37, 3), dtype = numpy.uint8), (0, 0), 3)
cv2.imwrite('a.png', a)
cv2.imwrite('b.png', b)
cv2.cvtColor(a, cv2.COLOR_BGR2HSV).tofile('a-hsv.u8')
histogram = lambda x: cv2.calcHist([ cv2.cvtColor(x, cv2.COLOR_BGR2HSV) ], [ 0, 1 ], None, [ 50, 60 ], [ 0, 180, 0, 256 ])
with open('factor.txt', 'w') as f:
	f.write(repr(float(numpy.interp(cv2.compareHist(histogram(a), histogram(b), cv2.HISTCMP_CORREL), [ -1, 1 ], [ 0, 1 ]))))

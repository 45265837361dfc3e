#!/usr/bin/python3
# Writes cvdraw.json: drawing cases and what OpenCV draws for them (cv2.line, cv2.rectangle,
# filled cv2.circle, cv2.findContours RETR_LIST/CHAIN_APPROX_NONE + cv2.drawContours), as
# FaceFusion's face_debugger calls them, and cv2.convexHull + cv2.fillConvexPoly on a float32
# mask, as its area mask does. Run with an interpreter that has cv2:
#   /usr/bin/python3 internal/raster/testdata/cvdraw_golden.py > internal/raster/testdata/cvdraw.json
import hashlib, json
import cv2, numpy

W, H = 48, 40
rng = numpy.random.RandomState(25)


def digest(canvas):
	return hashlib.sha256((canvas[:, :, 0] > 0).astype(numpy.uint8).tobytes()).hexdigest()[:16]


def point(margin):
	return [int(rng.randint(-margin, W + margin)), int(rng.randint(-margin, H + margin))]


cases = []
for i in range(120):
	a, b, t = point(8), point(8), int(rng.randint(1, 7))
	if i % 10 == 0:
		b = a
	canvas = numpy.zeros((H, W, 3), numpy.uint8)
	cv2.line(canvas, tuple(a), tuple(b), (255, 255, 255), t)
	cases.append({'op': 'line', 'a': a, 'b': b, 't': t, 'want': digest(canvas)})
for i in range(80):
	a, b, t = point(6), point(6), int(rng.randint(1, 7))
	canvas = numpy.zeros((H, W, 3), numpy.uint8)
	cv2.rectangle(canvas, tuple(a), tuple(b), (255, 255, 255), t)
	cases.append({'op': 'rectangle', 'a': a, 'b': b, 't': t, 'want': digest(canvas)})
for i in range(60):
	a, r = point(4), int(rng.randint(0, 11))
	canvas = numpy.zeros((H, W, 3), numpy.uint8)
	cv2.circle(canvas, tuple(a), r, (255, 255, 255), -1)
	cases.append({'op': 'circle', 'a': a, 'r': r, 'want': digest(canvas)})
for i in range(80):
	noise = rng.rand(H, W).astype(numpy.float32)
	blob = cv2.GaussianBlur(noise, (0, 0), 1 + i % 4)
	binary = (blob > numpy.percentile(blob, 30 + 40 * rng.rand())).astype(numpy.uint8) * 255
	if i % 8 == 0:
		binary[:, :] = 0
		binary[5:30, 6:40] = 255
		binary[12:20, 15:25] = 0
		binary[15, 20] = 255
	t = int(rng.randint(1, 5))
	contours, _ = cv2.findContours(binary, cv2.RETR_LIST, cv2.CHAIN_APPROX_NONE)
	canvas = numpy.zeros((H, W, 3), numpy.uint8)
	cv2.drawContours(canvas, contours, -1, (255, 255, 255), t)
	bits = numpy.packbits((binary > 0).reshape(-1)).tobytes().hex()
	cases.append({'op': 'contours', 'bits': bits, 't': t, 'n': len(contours), 'points': sum(len(c) for c in contours), 'want': digest(canvas)})

for i in range(60):
	n = int(rng.randint(3, 22))
	centre = numpy.array([rng.randint(0, W), rng.randint(0, H)])
	points = centre + rng.randn(n, 2) * rng.randint(2, 20)
	if i % 12 == 0:
		points = numpy.array([[3, 4], [10, 11], [17, 18], [24, 25]], numpy.float64) + i // 12
	points = points.astype(numpy.int32)
	hull = cv2.convexHull(points)
	mask = numpy.zeros((H, W), numpy.float32)
	cv2.fillConvexPoly(mask, hull, 1.0)
	canvas = numpy.repeat((mask[:, :, None] > 0).astype(numpy.uint8) * 255, 3, 2)
	cases.append({'op': 'hull', 'points': points.tolist(), 'hull': len(hull), 'want': digest(canvas)})

print('{"opencv": "%s", "w": %d, "h": %d, "cases": [' % (cv2.__version__, W, H))
print(',\n'.join(json.dumps(c, separators = (',', ':')) for c in cases))
print(']}')

#!/usr/bin/python3
# Writes areamask.json: FaceFusion 3.8.1's own create_area_mask (face_masker.py) on random
# 68-point sets and area choices, sampled at 600 pixels of each 512x512 crop mask (most on its
# feathered edge) with the mask's sum. Run from the Go checkout with the oracle's bridge built
# (../shared/reference/run-facefusion --work DIR builds DIR/lib/libortbridge.so):
#   FFREF_ORTBRIDGE=DIR/lib/libortbridge.so /usr/bin/python3 internal/align/testdata/areamask_golden.py > internal/align/testdata/areamask.json
import json, os, sys
import numpy
reference = os.path.join(os.path.dirname(__file__), '../../../../shared/reference')
sys.path.insert(0, os.path.join(reference, 'oracle'))
sys.path.insert(0, os.path.join(reference, 'facefusion-3.8.1'))
import cv2
from facefusion.face_masker import create_area_mask

rng = numpy.random.RandomState(7)
choices = [['upper-face', 'lower-face', 'mouth'], ['mouth'], ['upper-face'], ['lower-face', 'mouth'], ['upper-face', 'mouth'], ['lower-face'], ['mouth', 'upper-face', 'lower-face'], ['lower-face', 'upper-face']]
cases = []
for i, areas in enumerate(choices):
	ring = numpy.array([[256 + 150 * numpy.cos(a), 280 + 170 * numpy.sin(a)] for a in numpy.linspace(0, 2 * numpy.pi, 68, endpoint = False)])
	landmarks = (ring + rng.randn(68, 2) * 25).astype(numpy.float32)
	if i == len(choices) - 1:
		landmarks[:, 0] -= 200 # partly outside the crop
	mask = create_area_mask(numpy.zeros((512, 512, 3), numpy.uint8), landmarks, areas)
	edge = numpy.argwhere((mask > 0) & (mask < 1))
	other = numpy.argwhere((mask == 0) | (mask == 1))
	picks = [edge[j] for j in rng.choice(len(edge), min(250, len(edge)), replace = False)] + [other[j] for j in rng.choice(len(other), 50, replace = False)]
	samples = [[int(y), int(x), float("%.7g" % mask[y, x])] for y, x in picks]
	cases.append({'landmarks': landmarks.tolist(), 'areas': areas, 'sum': float(mask.astype(numpy.float64).sum()), 'samples': samples})
print(json.dumps({'opencv': cv2.__version__, 'cases': cases}))

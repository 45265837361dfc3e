"""FaceFusion 3.8.1's lip syncer on one face (processors/modules/lip_syncer/core.py's sync_lip),
run by the adapters' oracle test in run-facefusion's work copy.

usage: fflipsync.py JOB.json, JOB a list of {"frame" (an image), "five", "lm68" (the face's
5/68 and 68 points), "voice" (an 80 x 16 window, or null for FaceFusion's empty one), "model",
"weight", "out" (the PNG written)}. FaceFusion's state is its command line's for the model and
weight, with the box mask alone (its default); the face is given, not detected."""
import json
import os
import sys
from types import SimpleNamespace

sys.path.insert(0, os.getcwd())

import cv2  # noqa: E402
import numpy  # noqa: E402

from facefusion import state_manager  # noqa: E402
from facefusion.args import apply_args  # noqa: E402
from facefusion.audio import create_empty_audio_frame  # noqa: E402
from facefusion.processors.modules.lip_syncer import core as lip_syncer  # noqa: E402
from facefusion.program import create_program  # noqa: E402

for job in json.load(open(sys.argv[1])):
	sys.argv = [ 'facefusion.py', 'headless-run', '--processors', 'lip_syncer', '--lip-syncer-model', job['model'], '--lip-syncer-weight', str(job['weight']), '--execution-providers', 'cpu', '--execution-thread-count', '1', '-s', 'voice.wav', '-t', job['frame'], '-o', job['out'] ]
	apply_args(vars(create_program().parse_args()), state_manager.init_item)
	lip_syncer.clear_inference_pool()
	face = SimpleNamespace(landmark_set = { '5/68': numpy.array(job['five'], numpy.float32), '68': numpy.array(job['lm68'], numpy.float32) })
	voice = create_empty_audio_frame() if job['voice'] is None else numpy.array(job['voice'], numpy.float64)
	frame = cv2.imread(job['frame'])
	cv2.imwrite(job['out'], lip_syncer.sync_lip(face, voice, frame))

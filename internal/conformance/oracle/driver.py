"""The conformance suite's oracle driver: runs many cases through FaceFusion 3.8.1's own code in
one Python process, so that FaceFusion's start-up (imports, about 1.5 s) is paid once a test run.

usage: driver.py JOBS.json
Started by run-facefusion in its prepared work copy (the suite sets FFREF_PYTHON to oracle/python,
which turns run-facefusion's `python3 facefusion.py ARGS` into `python3 driver.py ARGS`), so
PYTHONPATH, PATH (the network guard), the ONNX Runtime bridge and the models are FaceFusion's as
for any run-facefusion call. The working folder is FaceFusion's copy.

JOBS.json is a list of jobs: {"name", "compare" (faces | image | video), "argv" (FaceFusion's
arguments after the program name: headless-run ... -s ... -t ... -o ...), "result" (a file the
job's JSON result is written to)}. Each job starts from a clean state: FaceFusion's state items
and every lru_cache of its modules are cleared, and its face store unless the job's detector and
landmarker flags are the previous job's (the jobs are sorted so that they follow), then argv is
parsed and applied as core.cli does. The inference pools stay: FaceFusion keys them by module,
model names, device and providers, and the model files do not change during a run. Then:

  faces  the target's faces as oracle/faces.py prints them (get_static_faces, then
         sort_and_filter_faces, with the faces of argv's -s, if any, as the source faces), each
         with its place in face_selector.select_faces's answer ("selected": indices into
         "faces", in the order FaceFusion processes them)
  image, video
         core.conditional_process, as headless-run runs a step (the processors' pre_check, then
         the workflow), writing the output path of argv; "faces" are then the target's (a
         video's first frame's), for the face box the comparison reads

The result is {"ok": true, ...} or {"ok": false, "error": "..."}; the driver goes on with the
next job either way and exits 0 once every job has a result."""
import io
import json
import os
import sys
import time
import traceback
import contextlib

root = os.getcwd()
sys.path.insert(0, root)


def link_model_folders():
	# run-facefusion links the models folder's files into .assets/models, not its folders; the
	# deep_swapper models live in folders (scope/name.dfm, custom/NAME.dfm), and FaceFusion lists
	# .assets/models/custom when its deep_swapper choices are imported: link them before that.
	assets = os.path.join(root, '.assets', 'models')
	for name in sorted(os.listdir(assets)):
		path = os.path.join(assets, name)
		if os.path.islink(path):
			models = os.path.dirname(os.path.realpath(path))
			for folder in sorted(os.listdir(models)):
				source = os.path.join(models, folder)
				target = os.path.join(assets, folder)
				if os.path.isdir(source) and not os.path.lexists(target):
					os.symlink(source, target)
			return


link_model_folders()

import numpy  # noqa: E402

from facefusion import face_store, logger, state_manager  # noqa: E402
from facefusion.args import apply_args  # noqa: E402


# Caches of facts about this machine, not about a case: the ffmpeg binary's encoders, the
# execution providers, the download hosts, facefusion.ini. Every other lru_cache of FaceFusion's
# modules is cleared between cases.
KEPT_CACHES = { 'facefusion.config', 'facefusion.execution', 'facefusion.download' }


def cache_encoder_set():
	# program.py asks ffmpeg for its encoders seven times a parse (ffmpeg -encoders, about 0.12 s
	# each); the answer is the ffmpeg binary's, the same for every case.
	from facefusion import ffmpeg, program

	encoder_set = ffmpeg.get_available_encoder_set()
	ffmpeg.get_available_encoder_set = lambda: encoder_set
	if hasattr(program, 'get_available_encoder_set'):
		program.get_available_encoder_set = ffmpeg.get_available_encoder_set


# The flags that decide what FaceFusion's face store holds for a frame: the detector's and the
# landmarker's (the recognizer and classifier are fixed). Jobs with the same ones keep the store,
# as FaceFusion keeps it from frame to frame within a run; any other flag leaves it alone.
ANALYSIS_FLAGS = ('--face-detector', '--face-landmarker')


def analysis_key(argv):
	key = []
	taking = False
	for arg in argv:
		if arg.startswith('-'):
			taking = arg.startswith(ANALYSIS_FLAGS)
			if taking:
				key.append(arg)
		elif taking:
			key.append(arg)
	return tuple(key)


def clear_state(keep_faces):
	state_manager.STATE_SET['cli'] = {}
	state_manager.STATE_SET['ui'] = {}
	if not keep_faces:
		face_store.clear_faces()
	for name, module in list(sys.modules.items()):
		if module is None or name in KEPT_CACHES or not (name == 'facefusion' or name.startswith('facefusion.')):
			continue
		for value in list(vars(module).values()):
			clear = getattr(value, 'cache_clear', None)
			if callable(clear) and getattr(value, '__module__', None) == name:
				clear()


def listed(value):
	return numpy.asarray(value, dtype = numpy.float64).round(6).tolist()


def faces_of(vision_frame):
	from facefusion.face_creator import get_static_faces
	from facefusion.face_selector import select_faces, sort_and_filter_faces
	from facefusion.filesystem import filter_image_paths
	from facefusion.vision import read_static_images

	# The sources as the processors read them: the selector's auto takes their face's class.
	source_vision_frames = read_static_images(filter_image_paths(state_manager.get_item('source_paths') or []))
	faces = sort_and_filter_faces(get_static_faces(source_vision_frames), get_static_faces([ vision_frame ]))
	selected = []
	for chosen in select_faces(vision_frame, source_vision_frames, [ vision_frame ]):
		for index, face in enumerate(faces):
			if face is chosen:
				selected.append(index)
				break
		else:
			selected.append(-1)
	return {
		'shape': list(vision_frame.shape),
		'faces':
		[
			{
				'bounding_box': listed(face.bounding_box),
				'detector_score': float(face.score_set.get('detector')),
				'landmarker_score': float(face.score_set.get('landmarker')),
				'angle': int(face.angle),
				'landmark_5': listed(face.landmark_set.get('5')),
				'landmark_5_68': listed(face.landmark_set.get('5/68')),
				'landmark_68': listed(face.landmark_set.get('68')),
				'embedding_norm_head': listed(numpy.ravel(face.embedding_norm)[:6]),
				'embedding_head': listed(numpy.ravel(face.embedding)[:6]),
				'gender': face.gender,
				'age': [ face.age.start, face.age.stop ],
				'race': face.race
			} for face in faces
		],
		'selected': selected
	}


def process():
	from facefusion import core

	if not core.processors_pre_check():
		raise RuntimeError('a processor\'s pre_check failed (a model file or its .hash?)')
	error_code = core.conditional_process()
	if error_code != 0:
		raise RuntimeError('conditional_process returned %d' % error_code)
	return { 'faces': faces_of(target_frame())['faces'] }


def target_frame():
	from facefusion.vision import read_static_image, read_static_video_frame

	target_path = state_manager.get_item('target_path')
	if state_manager.get_item('workflow_mode') == 'image-to-video':
		vision_frame = read_static_video_frame(target_path, 0)
	else:
		vision_frame = read_static_image(target_path)
	if vision_frame is None:
		raise RuntimeError('cannot read the target ' + target_path)
	return vision_frame


def cache_catalogs():
	# argparse asks gettext for its message catalogs at every message of every parser, and
	# create_program builds about 230 parsers a case: gettext.find looks on disk each time (20 of
	# create_program's 47 CPU-ms). The answer is this machine's, the same for every case.
	import gettext

	find, found = gettext.find, {}

	def cached_find(domain, localedir = None, languages = None, all = False):
		key = (domain, localedir, None if languages is None else tuple(languages), all)
		if key not in found:
			found[key] = find(domain, localedir, languages, all)
		return found[key]

	gettext.find = cached_find


def run_job(job, keep_faces):
	from facefusion.program import create_program

	clear_state(keep_faces)
	sys.argv = [ 'facefusion.py' ] + job['argv']
	stderr = io.StringIO()
	try:
		with contextlib.redirect_stderr(stderr):
			program = create_program()
			args = vars(program.parse_args())
	except SystemExit:
		raise RuntimeError('FaceFusion refused the arguments: ' + stderr.getvalue().strip().replace('\n', ' | '))
	apply_args(args, state_manager.init_item)
	logger.init(state_manager.get_item('log_level'))
	if job['compare'] == 'faces':
		return faces_of(target_frame())
	return process()


def main():
	if len(sys.argv) != 2:
		sys.exit('usage: driver.py JOBS.json')
	with open(sys.argv[1]) as file:
		jobs = json.load(file)
	cache_encoder_set()
	cache_catalogs()
	# Jobs that analyse alike run one after another, so the face store carries over; each job
	# writes its own result, so their order is free.
	jobs.sort(key = lambda job: analysis_key(job['argv']))
	previous = None
	for job in jobs:
		start = time.time()
		key = analysis_key(job['argv'])
		try:
			result = run_job(job, key == previous)
			result['ok'] = True
		except Exception as exception:
			result = { 'ok': False, 'error': '%s: %s' % (type(exception).__name__, exception), 'trace': traceback.format_exc() }
		previous = key
		result['seconds'] = round(time.time() - start, 3)
		with open(job['result'] + '.part', 'w') as file:
			json.dump(result, file)
		os.replace(job['result'] + '.part', job['result'])
	return 0


if __name__ == '__main__':
	sys.exit(main())

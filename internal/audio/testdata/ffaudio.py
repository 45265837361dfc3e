"""FaceFusion 3.8.1's audio features and voice extractor (facefusion/audio.py,
voice_extractor.py), run by the audio package's oracle test in run-facefusion's work copy.

usage: ffaudio.py JOB.json, JOB {"audio", "fps": [...], "voice": MODEL, "out", "voice_out"}.
It writes "out" as [{"audio", "identity", "voice"}, ...], one entry a rate in the job's order
("audio" and "identity" at the first rate only), each a list of FaceFusion's frames (80 x 16
windows): read_audio's; read_voice's with the voice
extractor replaced by its input scaled as prepare_audio_chunk scales it (int16 to float32 /
32767), so that the steps after it (resampling, normalising, the spectrogram, the windows) are
tested alone; and read_voice's with FaceFusion's own extractor running MODEL from
.assets/models on the CPU. That extractor's voice (batch_extract_voice's answer, interleaved
float32) is written to "voice_out"."""
import json
import os
import sys

sys.path.insert(0, os.getcwd())

import numpy  # noqa: E402

from facefusion import audio, ffmpeg, state_manager, voice_extractor  # noqa: E402
from facefusion.args import apply_args  # noqa: E402
from facefusion.program import create_program  # noqa: E402

job = json.load(open(sys.argv[1]))
# FaceFusion's state as its command line makes it (download hosts, providers, the model).
sys.argv = [ 'facefusion.py', 'headless-run', '--voice-extractor-model', job['voice'], '--execution-providers', 'cpu', '--execution-thread-count', '1', '-t', job['audio'], '-o', job['out'] ]
apply_args(vars(create_program().parse_args()), state_manager.init_item)

buffer = ffmpeg.read_audio_buffer(job['audio'], 48000, 16, 2)
samples = numpy.frombuffer(buffer, dtype = numpy.int16).reshape(-1, 2)
voice = voice_extractor.batch_extract_voice(samples, 240 * 1024, 180 * 1024)
voice.astype(numpy.float32).tofile(job['voice_out'])

# read_voice runs the extractor again at every rate: its answer is the one above, so it is
# handed back rather than computed anew (FaceFusion's own code still runs every other step).
extracted = lambda samples, chunk_size, step_size: voice
identity = lambda samples, chunk_size, step_size: samples.astype(numpy.float32) / numpy.iinfo(numpy.int16).max
result = []
for fps in job['fps']:
	entry = {}
	if not result:
		audio.batch_extract_voice = identity
		entry = { 'audio': audio.read_audio(job['audio'], fps), 'identity': audio.read_voice(job['audio'], fps) }
	audio.batch_extract_voice = extracted
	entry['voice'] = audio.read_voice(job['audio'], fps)
	result.append({ key: [ frame.tolist() for frame in frames ] for key, frames in entry.items() })
with open(job['out'], 'w') as file:
	json.dump(result, file)

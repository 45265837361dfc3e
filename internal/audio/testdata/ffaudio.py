"""FaceFusion 3.8.1's audio features (facefusion/audio.py), run by the audio package's oracle
test in run-facefusion's work copy: usage ffaudio.py JOB.json, JOB {"audio", "fps": [...],
"voice": "identity" | null, "out"}. It writes [{"audio": frames, "voice": frames}, ...], one a rate in the job's order, each
frame FaceFusion's 80 × 16 window. With "voice": "identity" the voice extractor is replaced by
its input scaled as prepare_audio_chunk scales it (int16 to float32 / 32767), so the features
after it (resampling, normalising, the spectrogram, the windows) are FaceFusion's own."""
import json
import os
import sys

sys.path.insert(0, os.getcwd())

import numpy  # noqa: E402

from facefusion import audio  # noqa: E402

job = json.load(open(sys.argv[1]))
if job.get('voice') == 'identity':
	audio.batch_extract_voice = lambda samples, chunk_size, step_size: samples.astype(numpy.float32) / numpy.iinfo(numpy.int16).max
result = []
for fps in job['fps']:
	entry = { 'audio': [ frame.tolist() for frame in audio.read_audio(job['audio'], fps) ] }
	if job.get('voice'):
		entry['voice'] = [ frame.tolist() for frame in audio.read_voice(job['audio'], fps) ]
	result.append(entry)
with open(job['out'], 'w') as file:
	json.dump(result, file)

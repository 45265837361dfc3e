package pipeline

import (
	"context"
	"fmt"
	"runtime"

	"github.com/facefusion-hpc/facefusion/internal/audio"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// lipSyncModels are the lip syncer's models: its own and the voice extractor rank 0 runs.
func lipSyncModels(cfg job.Config) []string {
	if !cfg.LipSyncs() {
		return nil
	}
	var names []string
	for _, k := range []struct {
		kind catalog.Kind
		sel  string
	}{{catalog.LipSyncer, cfg.LipSyncerModel}, {catalog.VoiceExtractor, cfg.VoiceExtractorModel}} {
		if m, err := catalog.Select(k.kind, k.sel); err == nil {
			names = append(names, m.Name)
		}
	}
	return names
}

// AnalyseVoice is rank 0's reading of the source audio for lip_syncer on a video target: the
// first audio file among the sources decoded as FaceFusion decodes it, its voice separated by
// voice_extractor_model over the whole track, and the features cut into one window per frame
// at FaceFusion's rate for the target (audio.FeatureRate). nil when the job does not sync
// lips.
func (m *Models) AnalyseVoice(ctx context.Context, info *video.Info) (*audio.Track, error) {
	if !m.cfg.LipSyncs() {
		return nil, nil
	}
	fps := audio.FeatureRate(info.FPS.Float(), m.cfg.OutputVideoFPS)
	path := m.cfg.SourceAudio()
	pcm, err := video.ReadPCM(ctx, path, audio.SampleRate, audio.Channels)
	if err != nil {
		// Bad input unless ffmpeg's failure was already classified (not installed, no room).
		return nil, fault.AsInput(fmt.Errorf("lip_syncer's source audio: %w: give a readable audio file among the sources (-s)", err))
	}
	if err := voiceRoom(path, m.cfg.TempDir(), len(pcm)/audio.Channels); err != nil {
		return nil, err
	}
	name := m.cfg.VoiceExtractorModel
	ex, err := adapters.NewVoiceExtractor(name, sessionConfig(m.cfg, name))
	if err != nil {
		return nil, err
	}
	defer ex.Close()
	voice, err := audio.ExtractVoice(ctx, pcm, ex, runtime.GOMAXPROCS(0))
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr // a stop: the voice stages end between blocks
	}
	if err != nil {
		return nil, fmt.Errorf("lip_syncer's source audio %s: %w", path, err)
	}
	// A long track's resample spills its transforms into a folder of its own under temp_path.
	track, err := audio.VoiceTrack(ctx, voice, fps, m.cfg.TempDir())
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr // a stop, not the temp folder's fault
	}
	if err != nil {
		return nil, scratchError(err, path, m.cfg.TempDir())
	}
	return track, nil
}

// voiceRoom refuses a source audio of samples a channel whose resample's scratch files
// (audio.ScratchBytes) do not fit in the temp folder dir's free room, before the voice
// extractor's minutes rather than after them. The room may still run out later (another
// process's files): scratchError says so then.
func voiceRoom(path, dir string, samples int) error {
	need, free := audio.ScratchBytes(samples), fault.FreeRoom(dir)
	if need == 0 || free < 0 || free >= need {
		return nil
	}
	return fault.AsEnvironment(fmt.Errorf("lip_syncer's source audio %s: its voice's resample (%.0f s) needs %.2f GB of scratch files in the temp folder %s, which has %.2f GB free: %s, or give a --temp-path with room",
		path, float64(samples)/audio.SampleRate, float64(need)/1e9, dir, float64(free)/1e9, fault.RoomFix(dir)))
}

// scratchError is the one line of the voice's resample failing with err on its scratch
// files in the temp folder dir: what to do is the room's (fault.AsNoRoom) or the folder's.
func scratchError(err error, path, dir string) error {
	err = fmt.Errorf("lip_syncer's source audio %s: %w", path, err)
	if fault.NoRoom(err) {
		return fault.AsNoRoom(err, dir)
	}
	return fmt.Errorf("%w: check the temp folder %s (--temp-path) and rerun the same command", err, dir)
}

// SetVoice installs the voice features (rank 0's, as every rank receives them) for the
// workers made after it.
func (m *Models) SetVoice(t *audio.Track) { m.voice = t }

// voiceFrames is the processors' view of the features: nil (not a nil *Track) without.
func (m *Models) voiceFrames() processors.VoiceFrames {
	if m.voice == nil {
		return nil
	}
	return m.voice
}

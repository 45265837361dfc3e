package driver

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"sort"
	"syscall"

	"github.com/facefusion-hpc/facefusion/internal/audio"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// The voice file (lustre.JobDir.Voice) is rank 0's voice features of the output's frames,
// kept so that a resume skips the voice extractor: voiceMagic, the SHA-256 of the job's
// fingerprint (what the features depend on: the source audio, the voice extractor model,
// the program, the trim and rate settings), the features' size, audio.Track.WriteTo's bytes
// and their CRC-32C. A file of another job, cut short or damaged is ignored with a warning
// and the voice analysed again.
const voiceMagic = "facefusion voice features 1\n"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// fingerprintSum is the SHA-256 of fp, its keys in order.
func fingerprintSum(fp map[string]string) [sha256.Size]byte {
	keys := make([]string, 0, len(fp))
	for k := range fp {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%d:%s%d:%s", len(k), k, len(fp[k]), fp[k])
	}
	var s [sha256.Size]byte
	h.Sum(s[:0])
	return s
}

// trackSize is the size of t's WriteTo bytes.
func trackSize(t *audio.Track) int64 {
	return 8 * (5 + int64(len(t.Ends)) + audio.MelFilters*int64(len(t.Spec)))
}

// writeVoice saves t as the voice file at path of the job whose fingerprint is fp.
func writeVoice(path string, fp map[string]string, t *audio.Track) error {
	return lustre.WriteAtomicFrom(path, func(w io.Writer) error {
		sum := fingerprintSum(fp)
		head := append([]byte(voiceMagic), sum[:]...)
		head = binary.LittleEndian.AppendUint64(head, uint64(trackSize(t)))
		if _, err := w.Write(head); err != nil {
			return err
		}
		crc := crc32.New(castagnoli)
		if _, err := t.WriteTo(io.MultiWriter(w, crc)); err != nil {
			return err
		}
		_, err := w.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32()))
		return err
	})
}

// readVoice is the voice file at path if it holds the features of the job whose fingerprint
// is fp; nil and "" without one, nil and why it is not used otherwise.
func readVoice(path string, fp map[string]string) (*audio.Track, string) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ""
	}
	if err != nil {
		return nil, err.Error()
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err.Error()
	}
	if !st.Mode().IsRegular() {
		return nil, "not a regular file"
	}
	r := bufio.NewReaderSize(f, 1<<20)
	head := make([]byte, len(voiceMagic)+sha256.Size+8)
	if _, err := io.ReadFull(r, head); err != nil {
		return nil, "cut short"
	}
	sum := fingerprintSum(fp)
	switch {
	case string(head[:len(voiceMagic)]) != voiceMagic:
		return nil, "not a voice features file of this program"
	case !bytes.Equal(head[len(voiceMagic):len(voiceMagic)+sha256.Size], sum[:]):
		return nil, "made for another job (its fingerprint differs)"
	}
	size := int64(binary.LittleEndian.Uint64(head[len(head)-8:]))
	if size < 0 || st.Size() != int64(len(head))+size+4 {
		return nil, fmt.Sprintf("%d bytes, not the %d its header says: cut short or damaged", st.Size(), int64(len(head))+size+4)
	}
	crc := crc32.New(castagnoli)
	t, err := audio.ReadTrack(io.TeeReader(r, crc), size)
	if err != nil {
		return nil, "damaged (" + err.Error() + ")"
	}
	var tail [4]byte
	if _, err := io.ReadFull(r, tail[:]); err != nil || binary.LittleEndian.Uint32(tail[:]) != crc.Sum32() {
		return nil, "damaged (its checksum differs)"
	}
	return t, ""
}

// reuseVoice puts the voice file's features into the plan when they are this job's (fp). Read
// before the folder is claimed, as resumedFolder reads the manifest: the file is written whole
// or not at all, and its header proves whose it is; a file that is not used stays, and the
// analysis's save replaces it.
func reuseVoice(path string, fp map[string]string, p *Plan, log *logging.Logger) {
	t, why := readVoice(path, fp)
	if t == nil {
		if why != "" {
			log.Warnf("lip_syncer: the voice analysis %s is not used: %s; the voice is analysed again", path, why)
		}
		return
	}
	p.voice, p.voiceReused = t, true
	log.Infof("lip_syncer: the voice analysis of an earlier attempt is reused from %s", path)
}

// saveVoice keeps rank 0's voice analysis in the job folder, once the folder is claimed and
// found this job's, for a resume to reuse (reuseVoice). A failed save costs a resume the
// analysis, not this attempt: a warning.
func saveVoice(jd *lustre.JobDir, p *Plan, log *logging.Logger) {
	if p.voice == nil || p.voiceReused || p.voiceFP == nil {
		return
	}
	if err := writeVoice(jd.Voice(), p.voiceFP, p.voice); err != nil {
		log.Warnf("lip_syncer: %v: a resume analyses the voice again", err)
		return
	}
	p.voiceSaved = true
}

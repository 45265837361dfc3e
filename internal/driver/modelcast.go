package driver

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/hugepage"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/scaling"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// The model broadcast (model_broadcast): before its plan, rank 0 reads each file the job's
// models need once (pipeline.ReadFiles) and broadcasts a manifest and the bytes; every rank
// registers them (infer.Preload), so that its checks and sessions read memory, not the shared
// file system: one read of the models a job instead of one a node, and no opens or stats of
// them off rank 0. The other ranks take the files named in the manifest, never their own
// config's list, so a rank whose settings differ cannot make the collectives disagree: it
// finds its own files missing from the registry, reads them itself, and its settings are
// refused later, as without the broadcast (sameSettings).
//
// On the wire, in every job of more than one rank: a fixed 16-byte header (the manifest's and
// the payload's lengths; zeros when rank 0 broadcasts nothing), then the manifest, then the
// payload in pieces of at most castChunk bytes. Every rank knows each step's length before it
// takes it, so a rank that cannot decode the manifest still takes the payload and reports its
// error at the agreement, without leaving rank 0 in a broadcast.

// castChunk is the largest piece of the payload one broadcast moves (tests make it small).
var castChunk = collective.MaxBcastChunk

// castManifest names the files rank 0 read and where their bytes lie in the payload.
type castManifest struct {
	Files []castFile
}

// castFile is one file of the broadcast: its absolute path on rank 0, its place in the payload
// and its modification time; Absent says rank 0 found no such file (an optional MODEL.hash).
// A file rank 0 could not read is not in the manifest: every rank reads it itself, and rank 0's
// plan fails on it with the usual message.
type castFile struct {
	Path         string
	Absent       bool `json:",omitempty"`
	Offset, Size int64
	ModTime      time.Time
}

// modelCast is a rank's part of the broadcast: its figures for the report and whether it holds
// registered bytes to drop.
type modelCast struct {
	stats   *report.ModelBroadcast // nil when nothing was broadcast
	held    bool
	files   int              // files registered
	release hugepage.Release // gives the payload's huge-page advice back (nil: none)
}

// drop releases the registered bytes, once the rank's sessions are open (or it will open
// none), and the payload's huge pages (the heap reuses its memory); idempotent, nil-safe.
func (c *modelCast) drop() {
	if c == nil {
		return
	}
	if c.held {
		infer.DropPreloaded()
		c.held = false
	}
	if c.release != nil {
		c.release()
		c.release = nil
	}
}

// castsModels is rank 0's decision: model_broadcast on with more than one rank, auto where the
// ranks span more than one host (on one host, the page cache shares one read of each file), and
// never for a job whose output may be done already (batch-run's rerun: a skipped target reads
// nothing) or for an image target (rank 0 alone processes it: the others open no session).
func castsModels(size, localSize int, cfg job.Config, skipDone bool) bool {
	if size < 2 || !cfg.RunsModels() || video.IsImagePath(cfg.TargetPath) {
		return false
	}
	if _, err := os.Lstat(cfg.OutputPath); skipDone && err == nil {
		return false
	}
	// auto: more ranks than rank 0's node holds (the model's rule at scale, one home).
	return scaling.Scale{Ranks: size, RanksPerNode: localSize}.Broadcasts(cfg.ModelBroadcast)
}

// shareModels runs the broadcast on every rank of a job of more than one rank. Rank 0's error
// is never returned (a file it cannot read is left out); another rank's is its setup error.
// Rank 0 registers the files it read before it sends them and then closes read (nil: not
// told), so that its own load, which waits for read, takes their bytes while they travel; it
// closes read whatever way this ends.
func shareModels(ctx context.Context, comm collective.Comm, cfg job.Config, skipDone bool, log *logging.Logger, read chan<- struct{}) (cast *modelCast, err error) {
	tellRead := func() {
		if read != nil {
			close(read)
			read = nil
		}
	}
	defer tellRead()
	if comm.Size() < 2 {
		return nil, nil
	}
	var man castManifest
	var payload, mb []byte
	var readTook time.Duration
	c := &modelCast{}
	defer func() {
		if cast == nil { // nothing kept: neither the registered bytes nor the payload's advice
			c.drop()
		}
	}()
	// A stop before the read: nothing to send (the ranks stop at their agreement).
	if comm.Rank() == 0 && ctx.Err() == nil && castsModels(comm.Size(), comm.LocalSize(), cfg, skipDone) {
		start := time.Now()
		man, payload, c.release = readModels(cfg)
		readTook = time.Since(start)
		if len(man.Files) > 0 {
			mb, _ = json.Marshal(&man)
			c.register(man, payload) // rank 0's manifest is its own: always within payload
		}
	}
	tellRead()
	start := time.Now()
	var head [16]byte
	binary.LittleEndian.PutUint64(head[:8], uint64(len(mb)))
	binary.LittleEndian.PutUint64(head[8:], uint64(len(payload)))
	fail := func(err error) (*modelCast, error) {
		c.drop()
		return nil, err
	}
	if err := comm.Bcast(0, head[:]); err != nil {
		return fail(fault.AsInternal(fmt.Errorf("model broadcast: %w", err)))
	}
	mlen, plen := binary.LittleEndian.Uint64(head[:8]), binary.LittleEndian.Uint64(head[8:])
	if mlen == 0 {
		return nil, nil
	}
	if comm.Rank() != 0 {
		if mlen > 1<<30 || plen > 1<<50 {
			return nil, fault.AsInternal(fmt.Errorf("model broadcast: a header of %d and %d bytes from rank 0: another program's?", mlen, plen))
		}
		mb, payload = make([]byte, mlen), make([]byte, plen)
		c.release = hugepage.Advise(payload) // written once by the broadcast: 2 MiB pages, not 25k faults of 4 KiB
	}
	if err := comm.Bcast(0, mb); err != nil {
		return fail(fault.AsInternal(fmt.Errorf("model broadcast: the manifest: %w", err)))
	}
	if err := collective.BcastChunks(comm, 0, payload, castChunk); err != nil {
		return fail(fault.AsInternal(fmt.Errorf("model broadcast: the files' bytes: %w", err)))
	}
	took := time.Since(start)
	if comm.Rank() != 0 {
		if err := json.Unmarshal(mb, &man); err != nil {
			return nil, fault.AsInternal(fmt.Errorf("model broadcast: decoding rank 0's manifest: %w", err))
		}
		if err := c.register(man, payload); err != nil {
			return nil, err
		}
	}
	c.stats = &report.ModelBroadcast{Bytes: int64(len(payload)), Seconds: took.Seconds(), Files: c.files}
	if comm.Rank() == 0 {
		c.stats.ReadSeconds = readTook.Seconds()
		log.Infof("model broadcast: %d file(s), %.1f MB, read in %.2f s, sent to %d rank(s) in %.2f s",
			c.stats.Files, float64(c.stats.Bytes)/1e6, readTook.Seconds(), comm.Size()-1, took.Seconds())
	}
	return c, nil
}

// register makes the files of man, whose bytes lie in payload, what this process's model
// checks and sessions read (infer.Preload).
func (c *modelCast) register(man castManifest, payload []byte) error {
	c.held = len(man.Files) > 0 // absent files are registered too: drop forgets them all
	for _, f := range man.Files {
		if f.Absent {
			infer.PreloadAbsent(f.Path)
			continue
		}
		if f.Offset < 0 || f.Size < 0 || f.Offset+f.Size > int64(len(payload)) {
			c.drop()
			return fault.AsInternal(fmt.Errorf("model broadcast: rank 0's manifest puts %s at bytes [%d,%d) of %d", f.Path, f.Offset, f.Offset+f.Size, len(payload)))
		}
		infer.Preload(f.Path, payload[f.Offset:f.Offset+f.Size:f.Offset+f.Size], f.ModTime)
		c.files++
	}
	return nil
}

// readModels is rank 0's read of the job's model files into one payload, each file once (read
// side by side: a parallel file system serves several streams faster than one). A file it
// cannot open or read whole is left out of the manifest (its bytes, if any, travel unused).
func readModels(cfg job.Config) (castManifest, []byte, hugepage.Release) {
	files, err := pipeline.ReadFiles(cfg)
	if err != nil {
		return castManifest{}, nil, nil // the plan reports it
	}
	type open struct {
		f   *os.File
		cf  castFile
		bad bool
	}
	var opened []*open
	var man castManifest
	var total int64
	seen := map[string]bool{}
	for _, rf := range files {
		path, err := filepath.Abs(rf.Path)
		if err != nil || seen[path] {
			continue
		}
		seen[path] = true
		f, err := os.Open(path)
		if os.IsNotExist(err) && rf.Optional {
			man.Files = append(man.Files, castFile{Path: path, Absent: true})
			continue
		}
		if err != nil {
			continue
		}
		st, err := f.Stat()
		if err != nil || !st.Mode().IsRegular() {
			f.Close()
			continue
		}
		opened = append(opened, &open{f: f, cf: castFile{Path: path, Offset: total, Size: st.Size(), ModTime: st.ModTime()}})
		total += st.Size()
	}
	payload := make([]byte, total)
	release := hugepage.Advise(payload) // read into once: 2 MiB pages (the first touch of 4 KiB ones was most of the read)
	var wg sync.WaitGroup
	for _, o := range opened {
		wg.Go(func() {
			defer o.f.Close()
			_, err := io.ReadFull(o.f, payload[o.cf.Offset:o.cf.Offset+o.cf.Size])
			var one [1]byte
			if n, _ := o.f.Read(one[:]); err != nil || n != 0 { // short, or grown while read
				o.bad = true
			}
		})
	}
	wg.Wait()
	for _, o := range opened {
		if !o.bad {
			man.Files = append(man.Files, o.cf)
		}
	}
	return man, payload, release
}

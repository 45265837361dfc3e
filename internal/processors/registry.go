package processors

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/swap"
)

// Context is what a processor opens with for one worker, so that the worker needs to know
// no processor by name.
type Context struct {
	Config job.Config
	// Session is how a model opens on the rank's engines (one session per model, shared by the
	// workers).
	Session func(model string) infer.SessionConfig
	// Mask is the job's face mask settings (face_mask_types, blur, padding, areas, regions).
	Mask adapters.MaskOptions
	// Source is what rank 0 found in the source images.
	Source Source
	// Voice is the source audio's voice features, one window per output frame (lip_syncer);
	// nil where there are none (an image target), which FaceFusion's workflow answers with its
	// empty window.
	Voice VoiceFrames
	// Stats is where the processors count; never nil.
	Stats Stats
}

// Source is the source face as rank 0 analysed it. WithSource false opens the processors
// without it (the engines are opened before the source is known): they then run no frame.
type Source struct {
	WithSource bool
	Embedding  *face.Embedding // the source identity: the swappers that take an embedding
	Frame      *raster.Image   // the first source image: the swappers that take a face crop
	Five       [5]geom.Pt      // the source face's five points in Frame
	Classic    *swap.Source    // the classic swapper's source face
}

// Opener opens a processor for one worker.
type Opener func(c *Context) (Processor, error)

var (
	registryMu sync.Mutex
	registry   = map[string]Opener{}
)

// Register makes open the opener of processor name (FaceFusion's name: face_swapper, …). Each
// processor's package registers itself when it is imported.
func Register(name string, open Opener) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("processors: %s registered twice", name))
	}
	registry[name] = open
}

// registered are the registered processors' names, sorted.
func registered() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	names := make([]string, 0, len(registry))
	for name := range registry {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

func lookup(name string) (Opener, bool) {
	registryMu.Lock()
	defer registryMu.Unlock()
	open, ok := registry[name]
	return open, ok
}

// Chain is one worker's processors: a step for each name of the job's processors, in its
// order, each processor opened once however often its name appears.
type Chain struct {
	steps  []Processor // nil for none
	opened []Processor
}

// Open opens the processors names asks for, in its order; none is a step that does nothing.
// Any other name no processor registered is refused: its frames would go out unprocessed.
func Open(c *Context, names []string) (*Chain, error) {
	ch := &Chain{}
	byName := map[string]Processor{}
	for _, name := range names {
		p, done := byName[name]
		open, ok := lookup(name)
		if !ok && name != job.ProcessorNone {
			ch.Close()
			return nil, fmt.Errorf("processors: %q is not a processor of this program (it has %s, and none)", name, strings.Join(registered(), ", "))
		}
		if !done && ok {
			var err error
			if p, err = open(c); err != nil {
				ch.Close()
				return nil, err
			}
			byName[name] = p
			ch.opened = append(ch.opened, p)
		}
		ch.steps = append(ch.steps, p)
	}
	return ch, nil
}

// Steps are the processors in the job's order (nil: none, a step that does nothing).
func (ch *Chain) Steps() []Processor { return ch.steps }

// Measured is the step before which the faces are as the processors leave them: one past the
// last step that changes faces (0 when none does).
func (ch *Chain) Measured() int {
	at := 0
	for i, p := range ch.steps {
		if p != nil && p.ChangesFaces() {
			at = i + 1
		}
	}
	return at
}

// ReadsOriginals reports whether a step reads Batch.Originals: the worker then keeps a copy
// of each frame with a face as it was before the first step.
func (ch *Chain) ReadsOriginals() bool {
	for _, p := range ch.opened {
		if r, ok := p.(OriginalReader); ok && r.ReadsOriginals() {
			return true
		}
	}
	return false
}

// Close lets every processor's sessions go.
func (ch *Chain) Close() error {
	var errs []error
	for _, p := range ch.opened {
		errs = append(errs, p.Close())
	}
	ch.opened, ch.steps = nil, nil
	return errors.Join(errs...)
}

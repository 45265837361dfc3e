package processors_test

import (
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	_ "github.com/facefusion-hpc/facefusion/internal/processors/expressionrestorer"
	_ "github.com/facefusion-hpc/facefusion/internal/processors/facedebugger"
	_ "github.com/facefusion-hpc/facefusion/internal/processors/faceeditor"
	_ "github.com/facefusion-hpc/facefusion/internal/processors/faceenhancer"
	_ "github.com/facefusion-hpc/facefusion/internal/processors/faceswapper"
)

// Every processor name the job's settings accept has a package registered under it: a name
// the settings pass but no package registers would be refused only once a worker opens it.
func TestEveryJobProcessorIsRegistered(t *testing.T) {
	_, err := processors.Open(&processors.Context{}, []string{"no_such_processor"})
	if err == nil {
		t.Fatal("an unknown processor name opened")
	}
	for _, name := range []string{job.ProcessorSwap, job.ProcessorEnhance, job.ProcessorDebug, job.ProcessorExpression, job.ProcessorFaceEditor} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("%s is not registered (the refusal names %q)", name, err)
		}
	}
}

package pipeline

import (
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/processors"
)

// Each face-changing processor's work lands in its own stage and its own face count: a stage
// the switch does not name would be counted nowhere (the run report's seconds and faces).
func TestProcessorStatsCountEachStage(t *testing.T) {
	for _, c := range []struct {
		stage processors.Stage
		name  string
		faces func(StatsSnapshot) int
	}{
		{processors.StageSwap, "swap", func(s StatsSnapshot) int { return s.FacesSwapped }},
		{processors.StageEnhance, "enhance", func(s StatsSnapshot) int { return s.FacesEnhanced }},
		{processors.StageAge, "age_modifier", func(s StatsSnapshot) int { return s.FacesAgeModified }},
		{processors.StageDeepSwap, "deep_swapper", func(s StatsSnapshot) int { return s.FacesDeepSwapped }},
		{processors.StageLipSync, "lip_syncer", func(s StatsSnapshot) int { return s.FacesLipSynced }},
		{processors.StageExpression, "expression_restorer", func(s StatsSnapshot) int { return s.FacesExpressionRestored }},
		{processors.StageFaceEditor, "face_editor", func(s StatsSnapshot) int { return s.FacesEdited }},
	} {
		st := &Stats{}
		processorStats{st}.Done(c.stage, time.Now().Add(-time.Second), 3)
		snap := st.Snapshot()
		if got := c.faces(snap); got != 3 {
			t.Errorf("%s: %d faces counted, want 3", c.name, got)
		}
		if snap.Seconds[c.name] < 1 {
			t.Errorf("%s: its stage took %v s, want the second it ran", c.name, snap.Seconds[c.name])
		}
	}
}

package driver

import (
	"encoding/json"
	"fmt"

	"github.com/facefusion-hpc/facefusion/internal/fault"
)

// What the driver's own collectives carry: the plan rank 0 broadcasts, the result each rank
// gathers to rank 0 (and rank 0's outcome, broadcast back), and the setup's agreement. Every
// rank runs the same binary, so these shapes need no versioning.

func encodePlan(p *Plan) ([]byte, error) { return json.Marshal(p) }

func decodePlan(b []byte, p *Plan) error { return json.Unmarshal(b, p) }

// encodeResult never fails: a Result holds no value JSON refuses.
func encodeResult(r *Result) []byte {
	b, _ := json.Marshal(r)
	return b
}

func decodeResult(b []byte, r *Result) error { return json.Unmarshal(b, r) }

// agreeVector is one rank's part of the setup's agreement, reduced with Max over the ranks:
// [0] the kind of its setup error + 1 (0: none); [1+r] the packed name of the signal that
// stopped rank r (0: none).
func agreeVector(ranks, me int, err error, signal string) []int64 {
	v := make([]int64, 1+ranks)
	if err != nil {
		v[0] = int64(fault.KindOf(err)) + 1
	}
	if signal != "" {
		v[1+me] = packName(signal)
	}
	return v
}

// readAgreement is the agreement's reduced vector: the stop's reason ("rank N: SIGTERM", the
// lowest rank signalled) or "", and whether some rank failed, with the largest kind.
func readAgreement(v []int64) (stop string, failed bool, kind fault.Kind) {
	for r, name := range v[1:] {
		if name != 0 {
			return fmt.Sprintf("rank %d: %s", r, unpackName(name)), false, 0
		}
	}
	return "", v[0] != 0, fault.Kind(v[0] - 1)
}

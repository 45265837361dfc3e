package infer

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/facemodel"
)

// The contracts' Prep and facemodel's swapper and enhancer tables state the same facts about
// FaceFusion's models (template, crop size, normalisation); the adapters read facemodel's, the
// signature checks infer's. This keeps the two from drifting apart.
func TestContractsAgreeWithFacemodelTables(t *testing.T) {
	checked := 0
	for _, c := range Contracts() {
		switch c.Kind {
		case KindSwapper:
			sw, err := facemodel.LookupSwapper(c.Name)
			if err != nil {
				t.Errorf("%s: a contract but no facemodel swapper: %v", c.Name, err)
				continue
			}
			if string(sw.Template) != c.Prep.Template || sw.Size != c.Prep.Size {
				t.Errorf("%s: facemodel %s@%d, contract %s@%d", c.Name, sw.Template, sw.Size, c.Prep.Template, c.Prep.Size)
			}
			for i := 0; i < 3; i++ {
				if float32(sw.Mean[i]) != c.Prep.Mean[i] || float32(sw.Std[i]) != c.Prep.Std[i] {
					t.Errorf("%s: facemodel mean/std %v/%v, contract %v/%v", c.Name, sw.Mean, sw.Std, c.Prep.Mean, c.Prep.Std)
					break
				}
			}
			checked++
		case KindEnhancer:
			en, err := facemodel.LookupEnhancer(c.Name)
			if err != nil {
				t.Errorf("%s: a contract but no facemodel enhancer: %v", c.Name, err)
				continue
			}
			if string(en.Template) != c.Prep.Template || en.Size != c.Prep.Size {
				t.Errorf("%s: facemodel %s@%d, contract %s@%d", c.Name, en.Template, en.Size, c.Prep.Template, c.Prep.Size)
			}
			checked++
		}
	}
	if checked < 12 {
		t.Fatalf("only %d swapper and enhancer contracts compared", checked)
	}
}

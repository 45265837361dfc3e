package catalog

import "github.com/facefusion-hpc/facefusion/infer"

// FaceFusion's yunet detector and fairface classifier (facefusion/face_detector.py,
// face_classifier.py), added to the one table.
func init() {
	distribution["yunet_2023_mar"] = struct{ base, pkg, licence string }{"models-3.4.0", "", "MIT"}
	distribution["fairface"] = struct{ base, pkg, licence string }{"models-3.0.0", "", "CC-BY-4.0"}

	// yunet takes the BGR frame as it is (0..255), FaceFusion offers it only at 640×640, and
	// reads its twelve outputs by position: class scores, objectness, boxes (centre offset,
	// log size) and five points, each for strides 8, 16 and 32, one anchor per cell.
	var outs []infer.TensorSpec
	for _, w := range []int64{1, 1, 4, 10} {
		for range 3 {
			outs = append(outs, f32("", dyn, dyn, w))
		}
	}
	addTo(table, &Model{Name: "yunet_2023_mar", Option: "yunet", Kind: Detector,
		Want: infer.Signature{Inputs: []infer.TensorSpec{f32("input", dyn, 3, dyn, dyn)}, Outputs: outs},
		Size: 640, Sizes: []int{640}, Norm: Norm{BGR: true, Scale: 1, Std: unit},
		Unconfirmed: "outputs [1, cells, 1|1|4|10] in the order cls, obj, bbox, kps (from FaceFusion's squeeze(0) and reshape(-1)); input sides"})

	// fairface: the face warped to arcface_112_v2 at 224×224, RGB, /255, ImageNet mean and
	// deviation; three outputs FaceFusion unpacks as race, gender and age ids and reads at [0].
	addTo(table, &Model{Name: "fairface", Kind: Classifier,
		Want: infer.Signature{
			Inputs: []infer.TensorSpec{f32("input", dyn, 3, 224, 224)},
			Outputs: []infer.TensorSpec{{Shape: []int64{dyn}, Type: infer.Int64}, {Shape: []int64{dyn}, Type: infer.Int64},
				{Shape: []int64{dyn}, Type: infer.Int64}}},
		Template: "arcface_112_v2", Size: 224, Norm: imagenet,
		Unconfirmed: "outputs race_id, gender_id, age_id as int64 [1] (the ids FaceFusion compares with 1, 2, …)"})
}

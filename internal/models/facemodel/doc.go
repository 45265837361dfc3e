// Package facemodel turns frames into the input tensors of FaceFusion's own ONNX models and
// their outputs back into faces, exactly as FaceFusion 3.8.1 does, so that studios' model
// files give FaceFusion's results here.
//
// It is pure Go and knows nothing of ONNX Runtime: every function reads or writes []float32
// buffers that the caller owns (the session glue in infer/ allocates them once per session),
// and nothing on a per-frame path allocates. Frames are RGB (raster.Image); FaceFusion's are
// BGR, so where a model was fed BGR by FaceFusion the planes are written in B, G, R order.
//
// The pieces, in pipeline order:
//   - Detector: yolo_face, scrfd, retinaface input (shrink to fit, zero pad bottom-right) and
//     output decoding (anchors, distances × stride, score threshold, NMS) to frame coordinates.
//   - 2dfan4: the 256×256 landmark crop and the decoding of its 68 points and score.
//   - arcface_w600k_r50: the 112×112 recognition crop, embeddings, distances, averaging.
//   - the face selector: modes one, many, reference and FaceFusion's eight orders.
//   - Swappers and Enhancers: per-model tables (template, size, normalisation) and the
//     source-embedding preparation (inswapper's emap projection, hyperswap's unit embedding).
package facemodel

package facemodel

import (
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// FairFace is FaceFusion's face classifier.
var FairFace = catalog.Must("fairface")

// PrepareFairFace writes fairface's input for the face with five points (FaceFusion's '5/68')
// into dst: the frame warped onto arcface_112_v2 at 224×224 (edges replicated), RGB, /255,
// ImageNet mean and deviation. crop is the caller's 224×224 scratch image.
func PrepareFairFace(dst []float32, crop, frame *raster.Image, five [5]geom.Pt) {
	align.WarpCrop(crop, frame, align.Estimate(five, align.Templates[FairFace.Template], FairFace.Size))
	t := table(FairFace.Norm)
	tensorFromImage(dst, crop, FairFace.Norm, &t)
}

// Genders and Races are FaceFusion's (facefusion/types.py Gender and Race), in its order.
var (
	Genders = []string{"female", "male"}
	Races   = []string{"white", "black", "latino", "asian", "indian", "arabic"}
)

// Categorize is FaceFusion's categorize_gender, categorize_age and categorize_race of
// fairface's ids.
func Categorize(race, gender, age int64) face.Class {
	c := face.Class{Gender: "male", Race: "white"}
	if gender == 1 {
		c.Gender = "female"
	}
	ages := [][2]int{{0, 2}, {3, 9}, {10, 19}, {20, 29}, {30, 39}, {40, 49}, {50, 59}, {60, 69}}
	c.Age = [2]int{70, 100}
	if age >= 0 && age < int64(len(ages)) {
		c.Age = ages[age]
	}
	switch race {
	case 1:
		c.Race = "black"
	case 2:
		c.Race = "latino"
	case 3, 4:
		c.Race = "asian"
	case 5:
		c.Race = "indian"
	case 6:
		c.Race = "arabic"
	}
	return c
}

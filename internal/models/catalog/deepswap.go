package catalog

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/facefusion-hpc/facefusion/infer"
)

// deepSwapperModels are deep_swapper's models by scope (processors/modules/deep_swapper/
// choices.py and core.py): DeepFaceLive identities trained by each scope's author, each a .dfm
// file (ONNX) whose name ends in its crop side. FaceFusion names one scope/name, keeps it under
// .assets/models/scope/name.dfm and downloads it from its Hugging Face repository
// deepfacelive-models-scope alone.
var deepSwapperModels = map[string][]string{
	"druuzil": {
		"adam_levine_320", "adrianne_palicki_384", "agnetha_falskog_224", "alan_ritchson_320",
		"alicia_vikander_320", "amber_midthunder_320", "andras_arato_384", "andrew_tate_320",
		"angelina_jolie_384", "anne_hathaway_320", "anya_chalotra_320", "arnold_schwarzenegger_320",
		"benjamin_affleck_320", "benjamin_stiller_384", "bradley_pitt_224", "brie_larson_384",
		"bruce_campbell_384", "bryan_cranston_320", "catherine_blanchett_352", "christian_bale_320",
		"christopher_hemsworth_320", "christoph_waltz_384", "cillian_murphy_320", "cobie_smulders_256",
		"dwayne_johnson_384", "edward_norton_320", "elisabeth_shue_320", "elizabeth_olsen_384",
		"elon_musk_320", "emily_blunt_320", "emma_stone_384", "emma_watson_320", "erin_moriarty_384",
		"eva_green_320", "ewan_mcgregor_320", "florence_pugh_320", "freya_allan_320", "gary_cole_224",
		"gigi_hadid_224", "harrison_ford_384", "hayden_christensen_320", "heath_ledger_320",
		"henry_cavill_448", "hugh_jackman_384", "idris_elba_320", "jack_nicholson_320",
		"james_carrey_384", "james_mcavoy_320", "james_varney_320", "jason_momoa_320",
		"jason_statham_320", "jennifer_connelly_384", "jimmy_donaldson_320", "jordan_peterson_384",
		"karl_urban_224", "kate_beckinsale_384", "laurence_fishburne_384", "lili_reinhart_320",
		"luke_evans_384", "mads_mikkelsen_384", "mary_winstead_320", "margaret_qualley_384",
		"melina_juergens_320", "michael_fassbender_320", "michael_fox_320", "millie_bobby_brown_320",
		"morgan_freeman_320", "patrick_stewart_224", "rachel_weisz_384", "rebecca_ferguson_320",
		"scarlett_johansson_320", "shannen_doherty_384", "seth_macfarlane_384", "thomas_cruise_320",
		"thomas_hanks_384", "william_murray_384", "zoe_saldana_384",
	},
	"edel": {
		"emma_roberts_224", "ivanka_trump_224", "lize_dzjabrailova_224", "sidney_sweeney_224",
		"winona_ryder_224",
	},
	"iperov": {
		"alexandra_daddario_224", "alexei_navalny_224", "amber_heard_224", "dilraba_dilmurat_224",
		"elon_musk_224", "emilia_clarke_224", "emma_watson_224", "erin_moriarty_224", "jackie_chan_224",
		"james_carrey_224", "jason_statham_320", "keanu_reeves_320", "margot_robbie_224",
		"natalie_dormer_224", "nicolas_coppola_224", "robert_downey_224", "rowan_atkinson_224",
		"ryan_reynolds_224", "scarlett_johansson_224", "sylvester_stallone_224", "thomas_cruise_224",
		"thomas_holland_224", "vin_diesel_224", "vladimir_putin_224",
	},
	"jen": {
		"angelica_trae_288", "ella_freya_224", "emma_myers_320", "evie_pickerill_224", "kang_hyewon_320",
		"maddie_mead_224", "nicole_turnbull_288",
	},
	"mats": {
		"alica_schmidt_320", "ashley_alexiss_224", "billie_eilish_224", "brie_larson_224",
		"cara_delevingne_224", "carolin_kebekus_224", "chelsea_clinton_224", "claire_boucher_224",
		"corinna_kopf_224", "florence_pugh_224", "hillary_clinton_224", "jenna_fischer_224",
		"kim_jisoo_320", "mica_suarez_320", "shailene_woodley_224", "shraddha_kapoor_320",
		"yu_jimin_352",
	},
	"rumateus": {
		"alison_brie_224", "amber_heard_224", "angelina_jolie_224", "aubrey_plaza_224",
		"bridget_regan_224", "cobie_smulders_224", "deborah_woll_224", "dua_lipa_224", "emma_stone_224",
		"hailee_steinfeld_224", "hilary_duff_224", "jessica_alba_224", "jessica_biel_224",
		"john_cena_224", "kim_kardashian_224", "kristen_bell_224", "lucy_liu_224", "margot_robbie_224",
		"megan_fox_224", "meghan_markle_224", "millie_bobby_brown_224", "natalie_portman_224",
		"nicki_minaj_224", "olivia_wilde_224", "shay_mitchell_224", "sophie_turner_224",
		"taylor_swift_224",
	},
}

// DeepSwapperCustomDir is the folder under models_dir whose files are deep_swapper models a
// site adds: FaceFusion's .assets/models/custom, each file (not hidden, not __*) a choice
// custom/NAME, NAME its file name without the extension.
const DeepSwapperCustomDir = "custom"

// deepSwapperTemplate is the warp template of every deep_swapper model.
const deepSwapperTemplate = "dfl_whole_face"

// addDeepSwappers adds deep_swapper's models. FaceFusion feeds 'in_face:0' the face warped to
// dfl_whole_face at the side the file's input gives, sharpened, /255, in its BGR order,
// channel-last [1,side,side,3], and, where the file has it, 'morph_value:0' [1]; it reads three
// outputs in order: the target face's mask, the swapped face (BGR, 0–1) and the source face's
// mask.
func addDeepSwappers(m map[string]*Model) {
	for scope, names := range deepSwapperModels {
		for _, name := range names {
			side, err := strconv.Atoi(name[strings.LastIndexByte(name, '_')+1:])
			if err != nil {
				panic("catalog: deep_swapper model " + name + " has no side")
			}
			x := DeepSwapperModel(scope+"/"+name, scope+"/"+name+".dfm", side)
			x.Published = published[x.Name]
			x.Base, x.Licence, x.Providers = "deepfacelive-models-"+scope, "not stated by FaceFusion", []string{"huggingface"}
			m[x.Name] = x
		}
	}
}

// DeepSwapperModel is deep_swapper's entry for the model FaceFusion calls name, in file (under
// models_dir) at crop side side; 0 leaves the side to the file (a site's custom model).
func DeepSwapperModel(name, file string, side int) *Model {
	s := int64(side)
	if side == 0 {
		s = dyn
	}
	return &Model{Name: name, File: file, Kind: DeepSwapper, Batched: true,
		Want: infer.Signature{
			Inputs: []infer.TensorSpec{f32("in_face:0", dyn, s, s, 3),
				f32("morph_value:0", 1)},
			Optional: []string{"morph_value:0"},
			Outputs:  []infer.TensorSpec{f32("", dyn, s, s, 1), f32("", dyn, s, s, 3), f32("", dyn, s, s, 1)}},
		Template: deepSwapperTemplate, Size: side, Norm: Norm{BGR: true, NHWC: true, Scale: 255, Std: unit},
		Unconfirmed: "the outputs' shapes (masks [1,side,side,1], face [1,side,side,3]), from FaceFusion's reshape and unpacking; 'morph_value:0' [1] where a file has it"}
}

// DeepSwapperCustom is the catalog entry of the site's model custom/NAME, the file file under
// models_dir/custom (FaceFusion lists that folder when it starts).
func DeepSwapperCustom(name, file string) (*Model, error) {
	if !strings.HasPrefix(name, DeepSwapperCustomDir+"/") || strings.ContainsAny(name[len(DeepSwapperCustomDir)+1:], `/\`) {
		return nil, fmt.Errorf("deep_swapper model %q: not a custom model (custom/NAME)", name)
	}
	x := DeepSwapperModel(name, path.Join(DeepSwapperCustomDir, file), 0)
	x.Licence = "the site's"
	return x, nil
}

-- Lmod module file for facefusion @VERSION@, written by `make install` (internal/deps/install.sh)
-- as PREFIX/share/modulefiles/facefusion/@VERSION@.lua. It is relocatable: the prefix is found
-- from this file's own path, so a prefix moved or copied as a whole still loads, and so does a
-- link to the file (or to its folder) from a site's modulefiles tree. Use it with
--   module use PREFIX/share/modulefiles
--   module load facefusion
help([[
facefusion @VERSION@: face swap for videos and images, from one rank to many MPI ranks.

  facefusion run -s FACE.jpg -t TARGET.mp4 -o OUT.mp4
  sbatch $FACEFUSION_SBATCH job.toml

The binary finds its ONNX Runtime library (PREFIX/lib/facefusion/libonnxruntime.so.1) and its
models (PREFIX/share/facefusion/models) beside itself. A job file's onnxruntime_library and
models_dir keys (or --onnxruntime-library, --models-dir) win over ONNXRUNTIME_LIBRARY and
FACEFUSION_MODELS_DIR, which win over the files beside the binary. Load the site's OpenMPI
module as well: the binary was built against it. Documentation: PREFIX/share/doc/facefusion.
]])
whatis("Name: facefusion")
whatis("Version: @VERSION@")
whatis("Description: face swap for videos and images on GPU clusters (MPI, Slurm, ONNX Runtime)")

local function prefixOf(file)
	local prefix, found = file:gsub("/share/modulefiles/[^/]+/[^/]+%.lua$", "")
	if found == 1 then
		return prefix
	end
end
local prefix = prefixOf(myFileName())
if not prefix then
	-- Linked into a site's modulefiles tree (the file, or its folder): the file it is knows.
	local real = capture("readlink -f '" .. (myFileName():gsub("'", "'\\''")) .. "'")
	prefix = prefixOf((real:gsub("%s+$", "")))
end
if not prefix then
	LmodError("facefusion: this module file must be PREFIX/share/modulefiles/facefusion/@VERSION@.lua, where `make install` wrote it, or a link to it (it finds PREFIX from its own path), not " .. myFileName())
end
prepend_path("PATH", pathJoin(prefix, "bin"))
prepend_path("MANPATH", pathJoin(prefix, "share/man"))
-- The batch script, for `sbatch $FACEFUSION_SBATCH job.toml`; it runs the facefusion on PATH.
setenv("FACEFUSION_SBATCH", pathJoin(prefix, "share/facefusion/facefusion.sbatch"))
-- ONNXRUNTIME_LIBRARY and FACEFUSION_MODELS_DIR are left alone: the binary finds its own files,
-- and a site module (a GPU ONNX Runtime, a shared models folder) or the user may set them,
-- whichever module loads first. A site that wants them here uncomments:
-- setenv("ONNXRUNTIME_LIBRARY", "/site/onnxruntime-gpu/lib/libonnxruntime.so.1")
-- setenv("FACEFUSION_MODELS_DIR", "/site/shared/facefusion/models")

// Package configs holds the TOML job files shipped with the program; the default is embedded in
// the binary so a bare `facefusion run -s SRC -t TARGET -o OUT` needs no file.
package configs

import _ "embed"

// Default is the embedded default job (default.toml).
//
//go:embed default.toml
var Default []byte

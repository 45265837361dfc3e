// Package deps is the scripts that get the program's tools and files: need.sh checks the tools a
// make target needs (installing Debian packages only where something is missing and apt-get
// can), fetch.sh fills the cache with the runtime, models and samples, install.sh installs the
// program under a prefix with an Lmod module file. It holds no Go code; its tests run the
// scripts for real.
package deps

// Package packaging holds what make package turns into the release files
// in dist/: the nfpm configurations of the .deb packages (gateway.yaml,
// cloud.yaml), their systemd units, maintainer scripts and example
// configurations (deb/), the Windows zip's example configuration and README
// (windows/), and mkzip, which writes the zip. Its tests build the packages
// with make package and check what a machine would get from them.
package packaging

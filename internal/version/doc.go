// Package version tells which release of storeprint a program is: the
// version stamped at build time (make build and make package set it from
// git describe), else the version Go recorded from the module and its VCS
// state, else "dev".
package version

// Package wine runs the Windows build of the project's programs under Wine
// for end-to-end tests of the Windows code paths (the print spooler, the
// service manager): a private Wine prefix per test, made ready for Go
// programs, and the programs cross-built for windows/amd64.
//
// Wine before 8.13 (Debian 12 ships 8.0) has no bcryptprimitives.dll, and
// Go programs stop at start without its ProcessPrng; NewPrefix builds the
// small stand-in in shim/ with MinGW-w64 and puts it in the prefix.
package wine

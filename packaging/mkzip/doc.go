// Command mkzip writes a zip archive of the files named on its command
// line, each at the top of the archive under its base name; make package
// uses it for the Windows gateway, so that packaging needs nothing but Go.
//
//	go run ./packaging/mkzip OUT.zip FILE...
package main

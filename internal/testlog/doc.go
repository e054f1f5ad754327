// Package testlog collects what a program under test writes, its log or
// a simulated printer's output, for the test to read while it writes.
package testlog

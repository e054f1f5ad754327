// Package clock tells the time and waits, behind an interface, so that the
// dispatcher, failover and the sync link can be driven by a fake clock in
// tests and so that waiting never depends on the wall clock.
//
// A Clock has two readings. Now is the wall clock: what is stored and shown
// to people; it may step (NTP, a person setting the time). Mono is a
// monotonic reading that never steps: every wait and every "how long
// since" in memory uses it. Times read back from disk are wall times and
// are re-based onto Mono once, when they are loaded.
package clock

// Package cups starts a private CUPS scheduler for tests: cupsd with its
// own configuration, spool and socket in a temporary directory, and raw
// queues to the test's printers, made with lpadmin as a user would. Wine's
// print spooler prints through it when its CUPS_SERVER names the socket.
package cups

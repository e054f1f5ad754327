// Package storeprint holds the words the gateway, the sync link, the cloud
// and the printer drivers share: an order and its limits, the id rules, the
// task_no, task statuses with the table of which status may follow which,
// the reasons a task needs a person, order sources, receipt and printer
// states, audit actions and the kinds of commands the cloud sends down.
//
// It imports nothing of the project, so that no side can grow a word the
// other does not know: the SQL CHECK lists, the sync decoder and the
// cloud's ingest are tested against the lists here.
package storeprint

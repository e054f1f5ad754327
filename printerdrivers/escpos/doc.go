// Package escpos speaks the ESC/POS printer language: it renders a kitchen
// ticket to the bytes a receipt printer prints (Encode), builds the process
// ID request that makes a printer confirm a ticket came out
// (ProcessIDRequest) and reads its answer (ReadConfirmation), asks for and
// parses real-time status (StatusRequest, ParseStatus), and turns a byte
// stream back into text lines, cuts and requests (Decoder) for the printer
// simulator and for tests.
//
// Every ticket ends the same way: its task_no alone as the last text line,
// then one command that feeds the paper to the cutter and cuts (GS V 66 0),
// so nothing but the cut follows the task_no. Text from a ticket never
// reaches the printer as a control byte.
package escpos

package storeprint

// Word names a message shown to people: a reason a ticket needs someone, a
// printer's trouble. Every page says it from this one catalogue, in the
// reader's language; the technical error stays in the API and behind a
// "details" toggle.
type Word string

// Printer words.
const (
	WordPrinterReady     Word = "printer.ready"
	WordPrinterOffline   Word = "printer.offline"
	WordPrinterPaperEnd  Word = "printer.paper_end"
	WordPrinterCoverOpen Word = "printer.cover_open"
	WordPrinterUnknown   Word = "printer.unknown"
	WordPrinterCutsOff   Word = "printer.cuts_off"
	WordPrinterNoConfirm Word = "printer.no_confirm"
)

// What people read of how a printer confirms its prints, where it is
// weaker than the printer's own answer for each ticket.
const (
	WordConfirmsStatus    Word = "printer.confirms_status"      // confirm = status: by DLE EOT only
	WordConfirmsNoJobLog  Word = "printer.no_job_log"           // ePOS job_log = true, and the printer keeps none
	WordConfirmsByWindows Word = "printer.confirmed_by_windows" // spooler with trust_spooler = true
)

// TroubleWords are the words of a printer in trouble that still answers
// its status as ready.
var TroubleWords = []Word{WordPrinterCutsOff, WordPrinterNoConfirm}

// Display words: a kitchen screen's state.
const (
	WordDisplayOnline  Word = "display.online"
	WordDisplayOffline Word = "display.offline"
)

// Alert words: what HQ reads of an alert about no single ticket's state.
const (
	WordAlertDeadLetter     Word = "alert.dead_letter"
	WordAlertCommandRefused Word = "alert.command_refused"
	// WordAlertCredentialShared: one gateway credential is in use on two
	// boxes (alert kind gateway_credential_shared).
	WordAlertCredentialShared Word = "alert.gateway_credential_shared"
)

// Ticket words.
const (
	WordTaskUncertain Word = "task.uncertain"
	WordTaskStale     Word = "task.stale"
	WordTaskRetries   Word = "task.retries"
	WordTaskRecovered Word = "task.recovered"
	WordTaskQueued    Word = "task.queued"
	WordTaskPrinting  Word = "task.printing"
	WordTaskRetryWait Word = "task.retry_wait"
	WordTaskDone      Word = "task.done"
	WordTaskCancelled Word = "task.cancelled"
)

// Languages the catalogue speaks.
var Languages = []string{"zh", "en"}

// Catalogue holds every word in every language.
var Catalogue = map[Word]map[string]string{
	WordPrinterReady:     {"en": "Ready", "zh": "就绪"},
	WordPrinterOffline:   {"en": "Printer unreachable: check its power and cable", "zh": "打印机连不上：请检查电源和网线"},
	WordPrinterPaperEnd:  {"en": "Out of paper", "zh": "缺纸"},
	WordPrinterCoverOpen: {"en": "Cover open", "zh": "纸仓盖未关"},
	WordPrinterUnknown:   {"en": "Not answering its status", "zh": "打印机无应答"},
	WordPrinterCutsOff:   {"en": "Cuts off while printing: check the paper and the cable", "zh": "打印中途断开：请检查纸张和网线"},
	WordPrinterNoConfirm: {"en": "Does not confirm prints: look at what came out of it", "zh": "打印后无确认：请查看这台打印机出的小票"},

	WordConfirmsStatus:    {"en": "Confirms by its status only (weaker): it said ready while the ticket printed", "zh": "仅凭打印机状态确认出单（较弱）：打印期间打印机报告就绪"},
	WordConfirmsNoJobLog:  {"en": "Keeps no job log: a ticket whose answer was lost needs a person", "zh": "打印机没有作业日志：失去应答的小票需人工核对"},
	WordConfirmsByWindows: {"en": "Confirmed by Windows, not by the printer", "zh": "由 Windows 确认出单，而非打印机本身"},

	WordDisplayOnline:  {"en": "Screen on", "zh": "屏幕在线"},
	WordDisplayOffline: {"en": "Screen silent: its tickets print on the backup printer", "zh": "屏幕无响应：小票改由备用打印机打印"},

	WordAlertDeadLetter:     {"en": "The store sent something the cloud could not apply", "zh": "门店发送的内容云端无法应用"},
	WordAlertCommandRefused: {"en": "The store did not carry out HQ's request", "zh": "门店未执行总部的操作"},
	WordAlertCredentialShared: {"en": "The store's gateway credential is in use on two boxes: keep it on one",
		"zh": "门店的网关凭证在两台设备上使用：请只保留一台"},

	WordTaskUncertain: {"en": "May have printed: look at the printer's paper before printing it again", "zh": "可能已打印：请先查看打印机出的小票再补打"},
	WordTaskStale:     {"en": "Held back: waited too long to print", "zh": "等待过久，已暂停打印"},
	WordTaskRetries:   {"en": "Could not print: the printer kept failing", "zh": "多次重试仍未打印"},
	WordTaskRecovered: {"en": "Held after the data was restored: check whether it printed", "zh": "数据恢复后暂停：请核对是否已打印"},
	WordTaskQueued:    {"en": "Waiting to print", "zh": "等待打印"},
	WordTaskPrinting:  {"en": "Printing", "zh": "打印中"},
	WordTaskRetryWait: {"en": "Will try again shortly", "zh": "稍后重试"},
	WordTaskDone:      {"en": "Printed", "zh": "已打印"},
	WordTaskCancelled: {"en": "Order voided", "zh": "订单已作废"},
}

// Say returns a word in a language, falling back to English.
func Say(w Word, lang string) string {
	if s := Catalogue[w][lang]; s != "" {
		return s
	}
	return Catalogue[w]["en"]
}

// PrinterWord is the word for a printer state.
func PrinterWord(s PrinterState) Word { return Word("printer." + string(s)) }

// ReasonWord is the word for why a task needs a person.
func ReasonWord(r Reason) Word { return Word("task." + string(r)) }

// StatusWord is the word for a task status without a reason.
func StatusWord(s Status) Word {
	if s == StatusAttention {
		return WordTaskUncertain
	}
	if s == StatusFailed {
		return WordTaskRetries
	}
	return Word("task." + string(s))
}

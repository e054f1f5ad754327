package storeprint

import "slices"

// Reason says why a task needs a person (status attention_required or
// failed).
type Reason string

const (
	ReasonUncertain Reason = "uncertain" // bytes may have printed, no confirmation
	ReasonStale     Reason = "stale"     // could not print within stale_after
	ReasonRetries   Reason = "retries"   // retries used up (status failed)
	ReasonRecovered Reason = "recovered" // its state may have gone backwards after damage or a restore
)

// Reasons lists every reason.
var Reasons = []Reason{ReasonUncertain, ReasonStale, ReasonRetries, ReasonRecovered}

// Valid reports whether r is a known reason; the empty reason is valid
// (a task that needs nobody).
func (r Reason) Valid() bool { return r == "" || slices.Contains(Reasons, r) }

// Source says where an order came from.
type Source string

const (
	SourcePOS      Source = "pos"   // posted to the gateway by a POS device
	SourceCloud    Source = "cloud" // a cloud order (delivery, online), sent down the sync link
	SourceTestPage Source = "test"  // a test page a person asked for
)

// Sources lists every source.
var Sources = []Source{SourcePOS, SourceCloud, SourceTestPage}

// Valid reports whether s is a known source; empty is valid (unknown).
func (s Source) Valid() bool { return s == "" || slices.Contains(Sources, s) }

// ReceiptState is one step of the local receipt of one attempt, written
// durably in this order. NotSent closes an attempt whose bytes provably
// never left; an attempt that ended without a confirmation keeps its last
// state (prepared or submitted) with the error noted: nobody knows whether
// it printed.
type ReceiptState string

const (
	ReceiptPrepared  ReceiptState = "prepared"  // durable before the first byte went to the printer
	ReceiptSubmitted ReceiptState = "submitted" // the bytes are out
	ReceiptPrinted   ReceiptState = "printed"   // the printer confirmed
	ReceiptConfirmed ReceiptState = "confirmed" // the cloud acknowledged it
	ReceiptNotSent   ReceiptState = "not_sent"  // the driver proved no byte left after prepared
)

// ReceiptStates lists every receipt state.
var ReceiptStates = []ReceiptState{ReceiptPrepared, ReceiptSubmitted, ReceiptPrinted, ReceiptConfirmed, ReceiptNotSent}

// Valid reports whether s is a known receipt state.
func (s ReceiptState) Valid() bool { return slices.Contains(ReceiptStates, s) }

// PrinterState is a printer's condition as last read from the printer.
type PrinterState string

const (
	PrinterReady     PrinterState = "ready"
	PrinterOffline   PrinterState = "offline"
	PrinterPaperEnd  PrinterState = "paper_end"
	PrinterCoverOpen PrinterState = "cover_open"
	PrinterUnknown   PrinterState = "unknown"
)

// PrinterStates lists every printer state.
var PrinterStates = []PrinterState{PrinterReady, PrinterOffline, PrinterPaperEnd, PrinterCoverOpen, PrinterUnknown}

// Valid reports whether s is a known printer state.
func (s PrinterState) Valid() bool { return slices.Contains(PrinterStates, s) }

// CommandKind is the kind of a command the cloud sends down to a store.
type CommandKind string

const (
	CommandOrder        CommandKind = "order"         // a cloud order to accept and print
	CommandRetry        CommandKind = "retry"         // make-up print of a task
	CommandReprint      CommandKind = "reprint"       // deliberate copy of a task, marked REPRINT
	CommandFailoverAck  CommandKind = "failover_ack"  // acknowledge a printer's failover
	CommandDeviceRevoke CommandKind = "device_revoke" // revoke a device paired with the gateway
)

// CommandKinds lists every command kind.
var CommandKinds = []CommandKind{CommandOrder, CommandRetry, CommandReprint, CommandFailoverAck, CommandDeviceRevoke}

// Valid reports whether k is a known command kind.
func (k CommandKind) Valid() bool { return slices.Contains(CommandKinds, k) }

// AuditAction names what a person (or the gateway on their behalf) did.
// Every action is written to an append-only audit log.
type AuditAction string

// Actions at the store, logged by the gateway and replayed to the cloud.
const (
	ActionVoid                AuditAction = "void"                 // an order voided
	ActionRetry               AuditAction = "retry"                // a make-up print
	ActionReprint             AuditAction = "reprint"              // a deliberate copy
	ActionResolve             AuditAction = "resolve"              // a person saw the paper
	ActionTestPage            AuditAction = "test_page"            // a test page
	ActionAcknowledgeFailover AuditAction = "acknowledge_failover" // a person saw a failover
	ActionFailback            AuditAction = "failback"             // stations moved back from the backup
	ActionDuplicatePrevented  AuditAction = "duplicate_prevented"  // an order sent again: answered, not printed
	ActionCommandRefused      AuditAction = "command_refused"      // a command from HQ the store could not carry out
	ActionPairingCreate       AuditAction = "pairing_create"       // a pairing code issued for a new device
	ActionDevicePair          AuditAction = "device_pair"          // a device paired with a code
	ActionDeviceRevoke        AuditAction = "device_revoke"        // a device's token revoked
	ActionHoldRecovered       AuditAction = "hold_recovered"       // waiting tickets held for a person: their state may have gone backwards
	ActionLearnedFromCloud    AuditAction = "learned_from_cloud"   // tasks moved to the newer state the cloud knew (after a restore)
	ActionBump                AuditAction = "bump"                 // a kitchen screen's bump: the ticket is done
	ActionRecall              AuditAction = "recall"               // a bumped ticket shown again on its screen
)

// Actions in the cloud, logged by the cloud.
const (
	ActionCreateTenant      AuditAction = "tenant.create"
	ActionCreateTenantToken AuditAction = "tenant_token.create"
	ActionCreateStore       AuditAction = "store.create"
	ActionCreateGateway     AuditAction = "gateway.create"
	ActionRevokeGateway     AuditAction = "gateway.revoke"
	ActionCloudRetry        AuditAction = "task.retry"
	ActionCloudReprint      AuditAction = "task.reprint"
	ActionCloudFailoverAck  AuditAction = "printer.failover_ack"
	ActionRevokeTenantToken AuditAction = "tenant_token.revoke"
	ActionCloudDeviceRevoke AuditAction = "device.revoke"
	ActionTakeOverTasks     AuditAction = "gateway.take_over"        // a store's next gateway took over the tasks of a revoked one
	ActionCreateCloudPRNT   AuditAction = "cloudprnt_printer.create" // a CloudPRNT printer polling the cloud
	ActionAlertAck          AuditAction = "alert.ack"                // a person at HQ saw an alert
)

// GatewayActions lists the actions a gateway logs.
var GatewayActions = []AuditAction{
	ActionVoid, ActionRetry, ActionReprint, ActionResolve, ActionTestPage,
	ActionAcknowledgeFailover, ActionFailback, ActionDuplicatePrevented, ActionCommandRefused,
	ActionPairingCreate, ActionDevicePair, ActionDeviceRevoke,
	ActionHoldRecovered, ActionLearnedFromCloud, ActionBump, ActionRecall,
}

// CloudActions lists the actions the cloud logs.
var CloudActions = []AuditAction{
	ActionCreateTenant, ActionCreateTenantToken, ActionCreateStore, ActionCreateGateway,
	ActionRevokeGateway, ActionCloudRetry, ActionCloudReprint, ActionCloudFailoverAck,
	ActionRevokeTenantToken, ActionCloudDeviceRevoke, ActionTakeOverTasks, ActionCreateCloudPRNT, ActionAlertAck,
}

// Valid reports whether a is a known action of either side.
func (a AuditAction) Valid() bool {
	return slices.Contains(GatewayActions, a) || slices.Contains(CloudActions, a)
}

// Role is what a device's token may do at the gateway. Each role may do
// everything the roles before it may.
type Role string

const (
	// RolePOS posts orders, voids them, makes copies and reads tasks,
	// printers, the board and its live updates.
	RolePOS Role = "pos"
	// RoleStaff also works the LAN page: make-up prints, "it printed",
	// failover acknowledgement and move back, test pages, printing stale
	// tickets, the audit log; and pairs POS devices.
	RoleStaff Role = "staff"
	// RoleAdmin also pairs staff and admin devices, lists and revokes
	// devices. The config's api_tokens are admin tokens.
	RoleAdmin Role = "admin"
	// RoleDisplay is a kitchen screen: it reads its own display's tickets
	// and bumps and recalls them, nothing else. Every other role may do
	// what it does.
	RoleDisplay Role = "display"
)

// Roles lists every role, least allowed first.
var Roles = []Role{RoleDisplay, RolePOS, RoleStaff, RoleAdmin}

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return slices.Contains(Roles, r) }

// RoleList is the roles as text, for messages.
func RoleList() string { return join(Roles) }

// Allows reports whether a token of role r may do what needs role need. A
// display token may do only what needs a display token.
func (r Role) Allows(need Role) bool {
	switch {
	case !r.Valid() || !need.Valid():
		return false
	case need == RoleDisplay:
		return true
	case r == RoleDisplay:
		return false
	}
	return slices.Index(Roles, r) >= slices.Index(Roles, need)
}

// Confirm is how a printer said a ticket printed: a printer's "confirms" and
// a printed receipt's "confirmed_by".
type Confirm string

const (
	// ESC/POS printers on a byte stream (tcp, serial), strongest first.
	ConfirmProcessID      Confirm = "process_id"      // GS ( H fn 48 answered after the ticket (Epson TM and compatibles)
	ConfirmTransmitStatus Confirm = "transmit_status" // GS r 1 answered after the ticket (most low-cost ESC/POS printers)
	ConfirmStatus         Confirm = "status"          // DLE EOT only: ready after the ticket went out and while it printed; weaker
	// The other drivers' own confirmations.
	ConfirmJobLog    Confirm = "job_log"   // ePOS-Print with the printer's print job log
	ConfirmEPOS      Confirm = "epos"      // ePOS-Print's answer to the print request
	ConfirmCloudPRNT Confirm = "cloudprnt" // the printer's CloudPRNT job confirmation
	ConfirmSpooler   Confirm = "spooler"   // the Windows spooler's "job complete" (trust_spooler = true)
	ConfirmBump      Confirm = "bump"      // a kitchen display's bump
)

// Confirms lists every confirmation word.
var Confirms = []Confirm{ConfirmProcessID, ConfirmTransmitStatus, ConfirmStatus, ConfirmJobLog, ConfirmEPOS, ConfirmCloudPRNT, ConfirmSpooler, ConfirmBump}

// Valid reports whether c is a known confirmation word.
func (c Confirm) Valid() bool { return slices.Contains(Confirms, c) }

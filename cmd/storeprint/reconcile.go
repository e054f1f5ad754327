package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

const reconcileUsage = `Usage:
  storeprint reconcile --gateway URL --gateway-token TOKEN --cloud URL --cloud-token TOKEN --store STORE_ID [--apply] [--json]

Compares a store's tasks with the cloud's, for IT after an outage, and lists
every task whose state differs:

  missing_at_store   the cloud has it, the store does not (a cloud order still
                     pending_delivery: the store never got it)
  missing_in_cloud   the store has it, the cloud never heard of it
  status, attempt    both have it; the cloud has an older state

It also reads the store's sync link (the gateway's /healthz): when the link
is down or behind, the report says so ("the link is N events behind;
differences may clear by themselves"): the gateway replays its outbox once
connected. It shows each side's incarnation of the store's data (the
gateway's data dir gets a new one when it is wiped or replaced) and whether
a resync ran: the store sent a snapshot (the cloud was behind, its database
restored) or learned the cloud's states (the store was behind, its data dir
restored from an older copy), and the cloud's last recorded data reset or
resync. Each difference is read again, cloud first, before it is reported,
so a busy store shows few passing ones.

--apply repairs what is safe to repair, and nothing prints twice:
  - a cloud order still pending_delivery that the store never got is posted
    to the gateway's POS API (POST /v1/orders) with the body the cloud
    accepted; the gateway accepts an order_id once, so if the link delivers
    it too, it prints once;
  - tasks the cloud lacks or has older are left to the sync link, which
    replays them once connected; nothing else is sent.
Then it checks again and reports what remains.

Flags (each also from its variable; a flag wins):
  --gateway URL          the store gateway's POS API, e.g. http://192.168.1.20:8080
                         (STOREPRINT_GATEWAY)
  --gateway-token TOKEN  a token of the gateway's api_tokens (STOREPRINT_GATEWAY_TOKEN)
  --cloud URL            the cloud's API, e.g. https://cloud.example (STOREPRINT_CLOUD)
  --cloud-token TOKEN    an admin token, or a token of the store's tenant
                         (STOREPRINT_CLOUD_TOKEN)
  --store STORE_ID       the store, as the cloud and the gateway name it
                         (STOREPRINT_STORE); checked against the gateway's
  --apply                repair what is safe to repair, then check again
                         (STOREPRINT_APPLY=true)
  --json                 print a machine-readable report (STOREPRINT_JSON=true)
  --timeout DURATION     for each request (default 1m; STOREPRINT_TIMEOUT)
Prefer the variables for the tokens: a flag shows in ps. Tokens are never
printed.

The --json report:
  {"store_id", "gateway", "cloud", "in_sync",
   "check": {"at", "link": {"configured","connected","since","cursor","last_seq",
             "pending","last_error","incarnation","resync"}, "link_behind", "link_note",
             "incarnations": {"store","store_resync","cloud":[{"gateway_id","incarnation",
                              "cursor","rank","revoked"}],"cloud_events"},
             "gateway_tasks", "cloud_tasks",
             "differences": [{"task_no","order_id","kind","gateway","cloud",
                              "repair","note"}], "counts"},
   "before": {...},   with --apply, when it repaired something: the first check
   "applied": [{"order_id","task_nos","result","detail"}],   null without --apply
   "error"}
  gateway and cloud are {"status","attempt"} or null; repair is deliver (what
  --apply does), link (the sync link replays it) or person; result is
  delivered, already_at_store or refused.

Exit status:
  0  in sync: every task the same at the store and in the cloud
  1  differences remain
  2  usage: a flag is missing or wrong, a token was refused, or the gateway
     serves another store; the message names the flag
  3  a side cannot be read; the message says which

Example:
  export STOREPRINT_GATEWAY_TOKEN=... STOREPRINT_CLOUD_TOKEN=...
  storeprint reconcile --gateway http://192.168.1.20:8080 --cloud https://cloud.example --store store-001
  storeprint reconcile --gateway http://192.168.1.20:8080 --cloud https://cloud.example --store store-001 --apply
`

// maxRows bounds the differences the human report lists; --json lists all.
const maxRows = 50

// confirmWorkers read differing tasks again in parallel.
const confirmWorkers = 8

// reconcile is the reconcile subcommand.
type reconcile struct {
	m *Main

	Gateway      string
	GatewayToken string
	Cloud        string
	CloudToken   string
	Store        string
	Apply        bool
	JSON         bool
	Timeout      time.Duration

	gw, cl *api
	now    func() time.Time
}

func newReconcile(m *Main) command { return &reconcile{m: m, now: time.Now} }

func (c *reconcile) env(name string) string {
	if c.m.Getenv == nil {
		return ""
	}
	return c.m.Getenv(name)
}

func (c *reconcile) parseFlags(args []string) error {
	apply, err := c.envBool("STOREPRINT_APPLY")
	if err != nil {
		return err
	}
	asJSON, err := c.envBool("STOREPRINT_JSON")
	if err != nil {
		return err
	}
	timeout := time.Minute
	if v := c.env("STOREPRINT_TIMEOUT"); v != "" {
		if timeout, err = time.ParseDuration(v); err != nil {
			return fmt.Errorf("reconcile: STOREPRINT_TIMEOUT: %q is not a duration such as 30s", v)
		}
	}
	fs := flag.NewFlagSet("storeprint reconcile", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned; --help prints reconcileUsage
	fs.StringVar(&c.Gateway, "gateway", c.env("STOREPRINT_GATEWAY"), "")
	fs.StringVar(&c.GatewayToken, "gateway-token", c.env("STOREPRINT_GATEWAY_TOKEN"), "")
	fs.StringVar(&c.Cloud, "cloud", c.env("STOREPRINT_CLOUD"), "")
	fs.StringVar(&c.CloudToken, "cloud-token", c.env("STOREPRINT_CLOUD_TOKEN"), "")
	fs.StringVar(&c.Store, "store", c.env("STOREPRINT_STORE"), "")
	fs.BoolVar(&c.Apply, "apply", apply, "")
	fs.BoolVar(&c.JSON, "json", asJSON, "")
	fs.DurationVar(&c.Timeout, "timeout", timeout, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(c.m.Stdout, reconcileUsage)
			return errHelp
		}
		return fmt.Errorf("reconcile: %w (see storeprint reconcile --help)", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("reconcile: unexpected argument %q (see storeprint reconcile --help)", fs.Arg(0))
	}
	gw, err := baseURL("--gateway", "STOREPRINT_GATEWAY", c.Gateway)
	if err != nil {
		return err
	}
	cl, err := baseURL("--cloud", "STOREPRINT_CLOUD", c.Cloud)
	if err != nil {
		return err
	}
	for _, f := range []struct{ flag, env, value, what string }{
		{"--gateway-token", "STOREPRINT_GATEWAY_TOKEN", c.GatewayToken, "a token of the gateway's api_tokens"},
		{"--cloud-token", "STOREPRINT_CLOUD_TOKEN", c.CloudToken, "an admin or tenant token of the cloud"},
		{"--store", "STOREPRINT_STORE", c.Store, "the store's id"},
	} {
		if strings.TrimSpace(f.value) == "" {
			return fmt.Errorf("reconcile: %s (or %s) is required: %s", f.flag, f.env, f.what)
		}
	}
	if c.Timeout <= 0 {
		return fmt.Errorf("reconcile: --timeout: %s is not a positive duration", c.Timeout)
	}
	c.gw = newAPI("gateway", "--gateway", "--gateway-token", gw, c.GatewayToken, c.Timeout)
	c.cl = newAPI("cloud", "--cloud", "--cloud-token", cl, c.CloudToken, c.Timeout)
	return nil
}

func (c *reconcile) envBool(name string) (bool, error) {
	v := c.env(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("reconcile: %s: %q is not true or false", name, v)
	}
	return b, nil
}

// baseURL checks an http(s) base URL given by flag.
func baseURL(flag, env, v string) (*url.URL, error) {
	if strings.TrimSpace(v) == "" {
		return nil, fmt.Errorf("reconcile: %s (or %s) is required: an http:// or https:// URL", flag, env)
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		shown := v
		if err == nil {
			shown = u.Redacted()
		}
		return nil, fmt.Errorf("reconcile: %s: %q is not an http:// or https:// URL", flag, shown)
	}
	return u, nil
}

// report is what reconcile found and did.
type report struct {
	StoreID string `json:"store_id"`
	Gateway string `json:"gateway"`
	Cloud   string `json:"cloud"`
	InSync  bool   `json:"in_sync"`
	// Check is the state reconcile ends with: after the repairs, with
	// --apply.
	Check *check `json:"check,omitempty"`
	// Before is the first check, when --apply repaired something.
	Before *check `json:"before,omitempty"`
	// Applied lists the repairs --apply made; null without --apply.
	Applied []action `json:"applied"`
	Error   string   `json:"error,omitempty"`
}

// action is one repair --apply made.
type action struct {
	OrderID string   `json:"order_id"`
	TaskNos []string `json:"task_nos"`
	Result  string   `json:"result"` // delivered | already_at_store | refused
	Detail  string   `json:"detail"`
}

// Results of an action.
const (
	resultDelivered = "delivered"
	resultAlready   = "already_at_store"
	resultRefused   = "refused"
)

func (c *reconcile) run(ctx context.Context) error {
	r := &report{StoreID: c.Store, Gateway: c.gw.base.Redacted(), Cloud: c.cl.base.Redacted()}
	err := c.reconcile(ctx, r)
	if err != nil {
		r.Error = err.Error()
	}
	if c.JSON {
		enc := json.NewEncoder(c.m.Stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if werr := enc.Encode(r); werr != nil && err == nil {
			err = fmt.Errorf("write the report: %w", werr)
		}
	} else {
		c.writeText(c.m.Stdout, r)
	}
	if err != nil {
		return err
	}
	if !r.InSync {
		return &exitStatus{code: exitDiffer}
	}
	return nil
}

// reconcile checks, repairs with --apply, and fills r.
func (c *reconcile) reconcile(ctx context.Context, r *report) error {
	// The gateway must be the store's: --apply posts the store's cloud
	// orders to it.
	id, err := gatewayStoreID(ctx, c.gw)
	if err != nil {
		return err
	}
	if id != c.Store {
		return &exitStatus{code: exitUsage, err: fmt.Errorf("--store: the gateway at %s serves store %q, not %q", c.gw.base.Redacted(), id, c.Store)}
	}
	ch, err := c.check(ctx)
	if err != nil {
		return err
	}
	r.Check, r.InSync = ch, ch.inSync()
	if !c.Apply {
		return nil
	}
	r.Applied = []action{}
	applied, err := c.apply(ctx, ch, &r.Applied)
	if !applied {
		return err
	}
	r.Before, r.Check, r.InSync = ch, nil, false
	if err != nil {
		return err
	}
	if ch, err = c.check(ctx); err != nil {
		return err
	}
	r.Check, r.InSync = ch, ch.inSync()
	return nil
}

// check reads both sides and compares them. The cloud is read first: for
// a task both have, the store's state is then at least as new as the
// cloud's. Every difference is read again, task by task, before it counts,
// and the link's state last, so that its pending events cover what was
// read.
func (c *reconcile) check(ctx context.Context) (*check, error) {
	cl, err := cloudTasks(ctx, c.cl, c.Store)
	if err != nil {
		return nil, err
	}
	gw, err := gatewayTasks(ctx, c.gw)
	if err != nil {
		return nil, err
	}
	if err := c.confirm(ctx, compare(gw, cl, linkState{}), gw, cl); err != nil {
		return nil, err
	}
	link, err := gatewayLink(ctx, c.gw)
	if err != nil {
		return nil, err
	}
	clLink, err := cloudLink(ctx, c.cl, c.Store)
	if err != nil {
		return nil, err
	}
	ch := newCheck(gw, cl, link, c.now())
	ch.Incarnations = newIncarnations(link, clLink)
	return ch, nil
}

// confirm reads each differing task again, from the cloud and then from the
// gateway, and updates gw and cl with what it finds.
func (c *reconcile) confirm(ctx context.Context, diffs []difference, gw, cl map[string]*taskState) error {
	type result struct {
		taskNo string
		gw, cl *taskState
		err    error
	}
	jobs, results := make(chan string), make(chan result)
	var wg sync.WaitGroup
	for range min(confirmWorkers, len(diffs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for no := range jobs {
				r := result{taskNo: no}
				if r.cl, r.err = cloudTaskState(ctx, c.cl, c.Store, no); r.err == nil {
					r.gw, r.err = gatewayTaskState(ctx, c.gw, no)
				}
				results <- r
			}
		}()
	}
	go func() {
		for _, d := range diffs {
			jobs <- d.TaskNo
		}
		close(jobs)
		wg.Wait()
		close(results)
	}()
	var first error
	for r := range results {
		switch {
		case r.err != nil:
			if first == nil {
				first = r.err
			}
		default:
			set(gw, r.taskNo, r.gw)
			set(cl, r.taskNo, r.cl)
		}
	}
	return first
}

func set(m map[string]*taskState, taskNo string, s *taskState) {
	if s == nil {
		delete(m, taskNo)
		return
	}
	m[taskNo] = s
}

// apply delivers every cloud order the store never got through the
// gateway's POS API, appending to actions; applied reports whether it
// posted anything. The gateway accepts an order_id once: an order the link
// delivered meanwhile is answered as a replay and prints nothing.
func (c *reconcile) apply(ctx context.Context, ch *check, actions *[]action) (applied bool, err error) {
	orders := map[string][]string{}
	var ids []string
	for _, d := range ch.Differences {
		if d.Repair != repairDeliver {
			continue
		}
		if orders[d.OrderID] == nil {
			ids = append(ids, d.OrderID)
		}
		orders[d.OrderID] = append(orders[d.OrderID], d.TaskNo)
	}
	sort.Strings(ids)
	for _, id := range ids {
		a := action{OrderID: id, TaskNos: orders[id]}
		o, err := cloudOrder(ctx, c.cl, c.Store, id)
		var se *apiStatusError
		switch {
		case errors.As(err, &se) && se.status == 404:
			a.Result, a.Detail = resultRefused, "the cloud has no order "+id+" to deliver: "+se.msg
			*actions = append(*actions, a)
			continue
		case err != nil:
			return applied, err
		}
		applied = true
		status, err := postOrder(ctx, c.gw, o)
		switch {
		case err == nil && status == 201:
			a.Result, a.Detail = resultDelivered, "posted to the gateway's POS API; it prints at the store"
		case err == nil:
			a.Result, a.Detail = resultAlready, "the gateway already had it (the link delivered it meanwhile): not printed again"
		case errors.As(err, &se) && se.status >= 400 && se.status < 500:
			a.Result, a.Detail = resultRefused, fmt.Sprintf("the gateway refused it (%d: %s): a person looks", se.status, se.msg)
		default:
			return applied, err
		}
		*actions = append(*actions, a)
	}
	return applied, nil
}

// writeText prints the report for people: per check the link, a short
// table and a summary line.
func (c *reconcile) writeText(w io.Writer, r *report) {
	fmt.Fprintf(w, "store %s: gateway %s, cloud %s\n", r.StoreID, r.Gateway, r.Cloud)
	if r.Before != nil {
		writeCheck(w, r.Before)
	}
	if r.Applied != nil {
		fmt.Fprintln(w)
		if len(r.Applied) == 0 {
			fmt.Fprintln(w, "apply: no cloud order to deliver")
		}
		for _, a := range r.Applied {
			fmt.Fprintf(w, "apply: order %s (%s): %s: %s\n", a.OrderID, strings.Join(a.TaskNos, ", "), a.Result, a.Detail)
		}
		if r.Before != nil {
			fmt.Fprintln(w, "\nafter --apply:")
		}
	}
	if r.Check != nil {
		writeCheck(w, r.Check)
	}
}

func writeCheck(w io.Writer, ch *check) {
	fmt.Fprintf(w, "sync link: %s\n", ch.Link.describe())
	if ch.Incarnations != nil {
		fmt.Fprintln(w, ch.Incarnations.describe())
	}
	if len(ch.Differences) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "TASK\tDIFFERENCE\tSTORE\tCLOUD\tREPAIR")
		for i, d := range ch.Differences {
			if i == maxRows {
				break
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.TaskNo, d.Kind, d.Gateway, d.Cloud, d.Note)
		}
		tw.Flush()
		if n := len(ch.Differences) - maxRows; n > 0 {
			fmt.Fprintf(w, "... and %d more (--json lists them all)\n", n)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, ch.summary())
}

func (c *reconcile) close() error { return nil }

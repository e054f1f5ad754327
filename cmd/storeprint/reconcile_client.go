package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"strconv"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

// Reading both sides over their HTTP APIs. Every failure names the side
// and the flag to look at; no message ever holds a token.

// gatewayPage is how many tasks reconcile asks the gateway for at once.
const gatewayPage = 5000

// errNotFound is a 404 answer to a single task or order.
var errNotFound = errors.New("not found")

// api is one side's HTTP API.
type api struct {
	side      string // "gateway" or "cloud"
	urlFlag   string // --gateway or --cloud
	tokenFlag string // --gateway-token or --cloud-token
	base      *url.URL
	token     string
	client    *http.Client
}

// exit statuses of reconcile (see reconcileUsage).
const (
	exitDiffer      = 1
	exitUsage       = 2
	exitUnreachable = 3
)

func (a *api) unreachable(format string, args ...any) error {
	return &exitStatus{code: exitUnreachable, err: fmt.Errorf("cannot read the %s at %s (%s): %s", a.side, a.base.Redacted(), a.urlFlag, fmt.Sprintf(format, args...))}
}

// do sends a request with a JSON body (when in is not nil) and decodes a
// 2xx answer into out. A 404 is errNotFound when notFoundOK; any other
// failure is an exitStatus: 2 for a refused token, 3 for the rest.
func (a *api) do(ctx context.Context, method, path string, query url.Values, in, out any, notFoundOK bool) (int, error) {
	u := a.base.JoinPath(path)
	u.RawQuery = query.Encode()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, fmt.Errorf("encode request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return 0, a.unreachable("%v", err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.client.Do(req)
	if err != nil {
		// url.Error repeats the URL, which holds no token; keep its cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, a.unreachable("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, a.unreachable("%s %s: read the answer: %v", method, path, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound && notFoundOK:
		return resp.StatusCode, errNotFound
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return resp.StatusCode, &exitStatus{code: exitUsage, err: fmt.Errorf("%s: the %s refused the token (%d %s)", a.tokenFlag, a.side, resp.StatusCode, apiError(data))}
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return resp.StatusCode, &apiStatusError{api: a, method: method, path: path, status: resp.StatusCode, msg: apiError(data)}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, a.unreachable("%s %s: the answer is not what a storeprint %s sends: %v", method, path, a.side, err)
		}
	}
	return resp.StatusCode, nil
}

// apiStatusError is an answer other than 2xx, 401, 403 (and 404 where
// that means "none").
type apiStatusError struct {
	api          *api
	method, path string
	status       int
	msg          string
}

func (e *apiStatusError) Error() string {
	return fmt.Sprintf("the %s at %s (%s) answered %s %s with %d: %s", e.api.side, e.api.base.Redacted(), e.api.urlFlag, e.method, e.path, e.status, e.msg)
}

// exitCode: a side that answers but cannot serve cannot be read, for
// reconcile's purpose.
func (e *apiStatusError) exitCode() int { return exitUnreachable }

// apiError is the {"error"} of an answer, or its start.
func apiError(data []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil && e.Error != "" {
		return e.Error
	}
	if len(data) > 200 {
		data = data[:200]
	}
	return strconv.Quote(string(data))
}

// The gateway's POS API.

// gatewayTask is a task as GET /v1/tasks shows it.
type gatewayTask struct {
	TaskNo  string            `json:"task_no"`
	OrderID string            `json:"order_id"`
	Status  storeprint.Status `json:"status"`
	Attempt int               `json:"attempt"`
}

func (t *gatewayTask) state() *taskState {
	return &taskState{OrderID: t.OrderID, Status: t.Status, Attempt: t.Attempt}
}

// gatewayStoreID returns the store the gateway serves (its LAN page's
// board), which also checks the token.
func gatewayStoreID(ctx context.Context, a *api) (string, error) {
	var b struct {
		StoreID string `json:"store_id"`
	}
	if _, err := a.do(ctx, "GET", "/v1/board", nil, nil, &b, false); err != nil {
		return "", err
	}
	return b.StoreID, nil
}

// gatewayLink reads the sync link's state from the gateway's /healthz.
func gatewayLink(ctx context.Context, a *api) (linkState, error) {
	var h struct {
		Cloud *linkState `json:"cloud"`
	}
	if _, err := a.do(ctx, "GET", "/healthz", nil, nil, &h, false); err != nil {
		return linkState{}, err
	}
	if h.Cloud == nil {
		return linkState{}, nil
	}
	l := *h.Cloud
	l.Configured = true
	return l, nil
}

// gatewayTasks lists every task of the store, a page at a time through
// the gateway's task_no cursor.
func gatewayTasks(ctx context.Context, a *api) (map[string]*taskState, error) {
	tasks := map[string]*taskState{}
	after := ""
	for {
		var page []gatewayTask
		q := url.Values{"limit": {strconv.Itoa(gatewayPage)}, "after": {after}}
		if _, err := a.do(ctx, "GET", "/v1/tasks", q, nil, &page, false); err != nil {
			return nil, err
		}
		for i := range page {
			tasks[page[i].TaskNo] = page[i].state()
		}
		if len(page) < gatewayPage {
			return tasks, nil
		}
		after = page[len(page)-1].TaskNo
	}
}

// gatewayTaskState reads one task; nil when the gateway has no such task.
func gatewayTaskState(ctx context.Context, a *api, taskNo string) (*taskState, error) {
	var t gatewayTask
	if _, err := a.do(ctx, "GET", "/v1/tasks/"+url.PathEscape(taskNo), nil, nil, &t, true); err != nil {
		if errors.Is(err, errNotFound) {
			return nil, nil
		}
		return nil, err
	}
	return t.state(), nil
}

// postOrder posts an order to the gateway's POS API: 201 accepted, 200 a
// replay of an order it already has.
func postOrder(ctx context.Context, a *api, o *storeprint.Order) (int, error) {
	return a.do(ctx, "POST", "/v1/orders", nil, o, nil, false)
}

// The cloud's API.

func cloudState(t *cloud.Task) *taskState {
	return &taskState{OrderID: t.OrderID, Status: t.Status, Attempt: t.Attempt}
}

// cloudStorePath is the store's path in the cloud's API.
func cloudStorePath(storeID string) string { return "/v1/stores/" + url.PathEscape(storeID) }

// cloudTasks pages through every task of the store, in task_no order,
// cloud.MaxTaskLimit at a time.
func cloudTasks(ctx context.Context, a *api, storeID string) (map[string]*taskState, error) {
	tasks := map[string]*taskState{}
	after := ""
	for {
		var page []*cloud.Task
		q := url.Values{"limit": {strconv.Itoa(cloud.MaxTaskLimit)}, "after": {after}}
		if _, err := a.do(ctx, "GET", cloudStorePath(storeID)+"/tasks", q, nil, &page, true); err != nil {
			if errors.Is(err, errNotFound) {
				return nil, &exitStatus{code: exitUsage, err: fmt.Errorf("--store: the cloud at %s has no store %q that this token may see", a.base.Redacted(), storeID)}
			}
			return nil, err
		}
		if len(page) > 0 && after != "" && tasks[page[0].TaskNo] != nil {
			// A task_no is never seen twice while paging: this cloud
			// ignores after= and answered the first page again.
			return nil, a.unreachable("GET %s/tasks does not page with after= (an older storeprint-cloud?)", cloudStorePath(storeID))
		}
		for _, t := range page {
			tasks[t.TaskNo] = cloudState(t)
		}
		if len(page) < cloud.MaxTaskLimit {
			return tasks, nil
		}
		after = page[len(page)-1].TaskNo
	}
}

// cloudTaskState reads one task; nil when the cloud has no such task.
func cloudTaskState(ctx context.Context, a *api, storeID, taskNo string) (*taskState, error) {
	var t cloud.Task
	if _, err := a.do(ctx, "GET", cloudStorePath(storeID)+"/tasks/"+url.PathEscape(taskNo), nil, nil, &t, true); err != nil {
		if errors.Is(err, errNotFound) {
			return nil, nil
		}
		return nil, err
	}
	return cloudState(&t), nil
}

// cloudOrder reads a cloud order's body as the cloud accepted it.
func cloudOrder(ctx context.Context, a *api, storeID, orderID string) (*storeprint.Order, error) {
	var o storeprint.Order
	if _, err := a.do(ctx, "GET", cloudStorePath(storeID)+"/orders/"+url.PathEscape(orderID), nil, nil, &o, false); err != nil {
		return nil, err
	}
	return &o, nil
}

// newAPI returns the API of a side at base. Requests are retried with
// backoff on connection errors and 5xx answers (every call reconcile makes
// is a read or an idempotent order post), so a link that is still shaky
// after an outage does not end the check.
func newAPI(side, urlFlag, tokenFlag string, base *url.URL, token string, timeout time.Duration) *api {
	rc := retryablehttp.NewClient()
	rc.RetryMax = 3
	rc.RetryWaitMin = 200 * time.Millisecond
	rc.RetryWaitMax = 2 * time.Second
	rc.Logger = nil // requests carry tokens in headers; keep them out of logs
	rc.HTTPClient.Timeout = timeout
	return &api{
		side: side, urlFlag: urlFlag, tokenFlag: tokenFlag, base: base, token: token,
		client: rc.StandardClient(),
	}
}

package http_test

import (
	"net/url"
	"reflect"
	"slices"
	"testing"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

func TestServer_FindOrder(t *testing.T) {
	t.Parallel()
	e := setup(t)
	acme := e.tenant("acme", "s1")
	globex := e.tenant("globex", "g1")
	e.must("POST", "/v1/stores/s1/orders", acme, order, 201, nil)

	t.Run("OK", func(t *testing.T) {
		var got storeprint.Order
		e.must("GET", "/v1/stores/s1/orders/d1", acme, nil, 200, &got)
		want := storeprint.Order{OrderID: "d1", Table: "online", Items: []storeprint.Item{
			{Name: "Noodles", Qty: 2, Station: "hot"},
			{Name: "Tea", Qty: 1, Station: "bar", Note: "no sugar"},
		}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v, want %+v", got, want)
		}
		// The body found is the body to post again: a replay.
		e.must("POST", "/v1/stores/s1/orders", adminToken, got, 200, nil)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		e.wantError("GET", "/v1/stores/s1/orders/d2", acme, nil, 404, "order d2 not found")
	})
	t.Run("ErrOtherTenant", func(t *testing.T) {
		e.wantError("GET", "/v1/stores/s1/orders/d1", globex, nil, 404, "not found")
	})
	t.Run("ErrNoToken", func(t *testing.T) {
		e.wantError("GET", "/v1/stores/s1/orders/d1", "", nil, 401, "")
	})
}

func TestServer_FindTasks_After(t *testing.T) {
	t.Parallel()
	e := setup(t)
	acme := e.tenant("acme", "s1")
	globex := e.tenant("globex", "g1")
	var want []string
	for _, id := range []string{"d3", "d1", "d2"} {
		o := map[string]any{"order_id": id, "items": order["items"]}
		e.must("POST", "/v1/stores/s1/orders", acme, o, 201, nil)
	}
	for _, id := range []string{"d1", "d2", "d3"} {
		want = append(want, "order_"+id+"_station_bar", "order_"+id+"_station_hot")
	}

	t.Run("OK", func(t *testing.T) {
		var got []string
		after := ""
		for range len(want) + 1 {
			var tasks []cloud.Task
			e.must("GET", "/v1/stores/s1/tasks?limit=4&after="+url.QueryEscape(after), acme, nil, 200, &tasks)
			for _, tk := range tasks {
				got = append(got, tk.TaskNo)
			}
			if len(tasks) < 4 {
				break
			}
			after = tasks[len(tasks)-1].TaskNo
		}
		if !slices.Equal(got, want) {
			t.Fatalf("got %v, want every task once in task_no order %v", got, want)
		}
	})
	t.Run("Status", func(t *testing.T) {
		var tasks []cloud.Task
		e.must("GET", "/v1/stores/s1/tasks?status=pending_delivery&limit=2&after=order_d1_station_hot", acme, nil, 200, &tasks)
		if len(tasks) != 2 || tasks[0].TaskNo != "order_d2_station_bar" || tasks[1].TaskNo != "order_d2_station_hot" {
			t.Fatalf("got %+v, want the two tasks of d2", tasks)
		}
	})
	t.Run("WithoutAfter", func(t *testing.T) {
		var tasks []cloud.Task
		e.must("GET", "/v1/stores/s1/tasks?limit=1", acme, nil, 200, &tasks)
		if len(tasks) != 1 || tasks[0].OrderID != "d3" {
			t.Fatalf("got %+v, want the oldest task (of d3) first", tasks)
		}
	})
	t.Run("ErrOtherTenant", func(t *testing.T) {
		e.wantError("GET", "/v1/stores/s1/tasks?after=", globex, nil, 404, "not found")
	})
}

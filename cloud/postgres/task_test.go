package postgres

import (
	"slices"
	"testing"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

func TestTaskService_FindTasks(t *testing.T) {
	t.Parallel()
	f := setup(t)
	gw, _ := f.mustStore(t, "acme", "s1")
	f.mustStore(t, "globex", "g1")
	ctx := tenantCtx("acme")
	// Seven tasks: five the gateway reported (created at t0, before the
	// cloud orders) and two pending cloud tasks created now.
	if _, err := f.ingestEvents(adminCtx, gw.ID, "s1", lifecycle(1, 5, "p")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.orders.CreateOrder(ctx, "s1", newOrder("a0")); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"order_a0_station_bar", "order_a0_station_hot",
		"order_p0_station_hot", "order_p1_station_hot", "order_p2_station_hot", "order_p3_station_hot", "order_p4_station_hot",
	}
	// page reads every page of limit tasks and returns the task_nos in the
	// order they came.
	page := func(t *testing.T, status storeprint.Status, limit int) []string {
		t.Helper()
		var got []string
		after := ""
		for i := 0; ; i++ {
			if i > 10 {
				t.Fatalf("still paging after %d pages: %v", i, got)
			}
			cursor := after
			tasks, err := f.tasks.FindTasks(ctx, "s1", cloud.TaskFilter{Status: status, Limit: limit, After: &cursor})
			if err != nil {
				t.Fatal(err)
			}
			for _, tk := range tasks {
				got = append(got, tk.TaskNo)
			}
			if len(tasks) < limit {
				return got
			}
			after = tasks[len(tasks)-1].TaskNo
		}
	}

	t.Run("OldestFirst", func(t *testing.T) {
		tasks, err := f.tasks.FindTasks(ctx, "s1", cloud.TaskFilter{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(tasks) != 1 || tasks[0].TaskNo != "order_p0_station_hot" {
			t.Fatalf("got %+v, want the oldest task without after", tasks)
		}
	})
	t.Run("After", func(t *testing.T) {
		for _, limit := range []int{1, 3, 7, 1000} {
			if got := page(t, "", limit); !slices.Equal(got, want) {
				t.Errorf("limit %d: got %v, want %v", limit, got, want)
			}
		}
	})
	t.Run("AfterStatus", func(t *testing.T) {
		if got := page(t, cloud.StatusPendingDelivery, 1); !slices.Equal(got, want[:2]) {
			t.Fatalf("got %v, want the two cloud tasks", got)
		}
		if got := page(t, storeprint.StatusDone, 2); !slices.Equal(got, want[2:]) {
			t.Fatalf("got %v, want the five done tasks", got)
		}
	})
	t.Run("AfterLast", func(t *testing.T) {
		last := want[len(want)-1]
		tasks, err := f.tasks.FindTasks(ctx, "s1", cloud.TaskFilter{After: &last})
		if err != nil || len(tasks) != 0 {
			t.Fatalf("got %d tasks err %v, want none after the last", len(tasks), err)
		}
	})
	t.Run("ErrOtherTenant", func(t *testing.T) {
		after := ""
		_, err := f.tasks.FindTasks(tenantCtx("globex"), "s1", cloud.TaskFilter{After: &after})
		wantCode(t, err, storeprint.ENOTFOUND)
	})
	t.Run("ErrLimit", func(t *testing.T) {
		after := ""
		_, err := f.tasks.FindTasks(ctx, "s1", cloud.TaskFilter{Limit: cloud.MaxTaskLimit + 1, After: &after})
		wantCode(t, err, storeprint.EINVALID)
	})
}

package ui

import (
	"errors"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"
	"github.com/hibiken/asynq"

	"github.com/leadgate/leadgate/jobs"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/views"
)

// queueTaskListLimit caps the tasks listed per queue and state.
const queueTaskListLimit = 20

// queueNamePattern is what a queue name or task id in a URL may look like.
var queueNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)

func (u *UI) inspector() *asynq.Inspector {
	if u.Redis == nil {
		return nil
	}
	return asynq.NewInspectorFromRedisClient(u.Redis)
}

// ListQueues shows every queue's depth and its archived and retrying tasks (admin).
func (u *UI) ListQueues(w http.ResponseWriter, r *http.Request) {
	v := views.QueuesView{Now: u.now()}
	in := u.inspector()
	if in == nil {
		v.Problem = "This process has no Redis connection to inspect."
	} else if err := u.fillQueues(in, &v); err != nil {
		u.Log.Warn("queue inspector", "err", err)
		v.Problem = "Redis did not answer: " + err.Error() + ". Check LEADGATE_REDIS_URL and /readyz."
	} else {
		v.Available = true
	}
	u.page(w, r, http.StatusOK, views.NavQueues, "Queues", func(m views.PageMeta) templ.Component { return views.QueuesPage(m, v) })
}

func (u *UI) fillQueues(in *asynq.Inspector, v *views.QueuesView) error {
	names, err := in.Queues()
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, n := range names {
		seen[n] = true
	}
	for n := range jobs.Queues {
		if !seen[n] {
			names = append(names, n)
		}
	}
	sort.Slice(names, func(i, j int) bool {
		wi, wj := jobs.Queues[names[i]], jobs.Queues[names[j]]
		if wi != wj {
			return wi > wj
		}
		return names[i] < names[j]
	})
	for _, n := range names {
		row := views.QueueRow{Name: n, Weight: jobs.Queues[n], Latency: "–"}
		if !seen[n] {
			v.Queues = append(v.Queues, row) // never used yet
			continue
		}
		info, err := in.GetQueueInfo(n)
		if err != nil {
			return err
		}
		row.Pending, row.Active, row.Scheduled, row.Retry, row.Archived = info.Pending, info.Active, info.Scheduled, info.Retry, info.Archived
		row.Processed, row.Failed, row.Paused = info.Processed, info.Failed, info.Paused
		if info.Pending > 0 {
			row.Latency = info.Latency.Round(time.Millisecond).String()
		}
		v.Queues = append(v.Queues, row)
		if info.Archived > 0 {
			tasks, err := in.ListArchivedTasks(n, asynq.PageSize(queueTaskListLimit))
			if err != nil {
				return err
			}
			v.Archived = append(v.Archived, taskRows(tasks)...)
		}
		if info.Retry > 0 {
			tasks, err := in.ListRetryTasks(n, asynq.PageSize(queueTaskListLimit))
			if err != nil {
				return err
			}
			v.Retrying = append(v.Retrying, taskRows(tasks)...)
		}
	}
	return nil
}

func taskRows(tasks []*asynq.TaskInfo) []views.TaskRow {
	out := make([]views.TaskRow, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, views.TaskRow{Queue: t.Queue, ID: t.ID, Type: t.Type, LastErr: t.LastErr, LastFailed: t.LastFailedAt,
			Retried: t.Retried, MaxRetry: t.MaxRetry})
	}
	return out
}

// ArchivedTaskAction retries ("run") or deletes one archived task; the audit
// entry commits only if Redis carried the action out.
func (u *UI) ArchivedTaskAction(w http.ResponseWriter, r *http.Request) {
	queue, id, action := chi.URLParam(r, "queue"), chi.URLParam(r, "id"), chi.URLParam(r, "action")
	in := u.inspector()
	if in == nil || !queueNamePattern.MatchString(queue) || !queueNamePattern.MatchString(id) || (action != "run" && action != "delete") {
		u.NotFound(w, r)
		return
	}
	err := u.Store.Tx(r.Context(), func(tx *models.Store) error {
		if err := auditUI(r.Context(), tx, r, 0, "queue.task_"+action, "asynq_task", queue+"/"+id, nil, map[string]string{"queue": queue, "task_id": id}); err != nil {
			return err
		}
		if action == "run" {
			return in.RunTask(queue, id)
		}
		return in.DeleteTask(queue, id)
	})
	switch {
	case errors.Is(err, asynq.ErrTaskNotFound), errors.Is(err, asynq.ErrQueueNotFound):
		u.flashRedirect(w, r, "/queues", "error", "That task is gone: it was retried or deleted already.")
	case err != nil:
		u.serverError(w, r, err)
	case action == "run":
		u.flashRedirect(w, r, "/queues", "ok", "Task queued to run again.")
	default:
		u.flashRedirect(w, r, "/queues", "ok", "Task deleted.")
	}
}

// ArchivedTasksAll retries ("run-all") or deletes every archived task of a queue.
func (u *UI) ArchivedTasksAll(w http.ResponseWriter, r *http.Request) {
	queue, action := chi.URLParam(r, "queue"), chi.URLParam(r, "action")
	in := u.inspector()
	if in == nil || !queueNamePattern.MatchString(queue) || (action != "run-all" && action != "delete-all") {
		u.NotFound(w, r)
		return
	}
	n := 0
	err := u.Store.Tx(r.Context(), func(tx *models.Store) error {
		var err error
		if action == "run-all" {
			n, err = in.RunAllArchivedTasks(queue)
		} else {
			n, err = in.DeleteAllArchivedTasks(queue)
		}
		if err != nil {
			return err
		}
		return auditUI(r.Context(), tx, r, 0, "queue.archived_"+map[string]string{"run-all": "run_all", "delete-all": "delete_all"}[action],
			"asynq_queue", queue, nil, map[string]any{"queue": queue, "tasks": n})
	})
	switch {
	case errors.Is(err, asynq.ErrQueueNotFound):
		u.flashRedirect(w, r, "/queues", "error", "Queue "+queue+" has no tasks.")
	case err != nil:
		u.serverError(w, r, err)
	case action == "run-all":
		u.flashRedirect(w, r, "/queues", "ok", strconv.Itoa(n)+" archived task(s) of "+queue+" queued to run again.")
	default:
		u.flashRedirect(w, r, "/queues", "ok", strconv.Itoa(n)+" archived task(s) of "+queue+" deleted.")
	}
}

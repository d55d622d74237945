package jobs

import "github.com/hibiken/asynq"

// registerLifecycle registers the apply handlers (filled in with the lifecycle engine).
func registerLifecycle(mux *asynq.ServeMux, d Deps) {}

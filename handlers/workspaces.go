package handlers

// WorkspaceJSON is how the API shows a workspace and the audit records one.
type WorkspaceJSON struct {
	Slug string `json:"slug"`
	Name string `json:"name"`
}

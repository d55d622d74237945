package handlers

// workspaceJSON is how the API shows a workspace and the audit records one.
type workspaceJSON struct {
	Slug string `json:"slug"`
	Name string `json:"name"`
}

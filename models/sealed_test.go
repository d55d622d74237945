package models_test

import (
	"context"
	"testing"

	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/models/modelstest"
)

// TestSecretsResealMovesEverySecretToTheNewKey is `leadgate secrets rotate`:
// afterwards every stored secret opens with the new key and none with the old.
func TestSecretsResealMovesEverySecretToTheNewKey(t *testing.T) {
	ctx := context.Background()
	st := modelstest.Store(t)
	oldBox, _ := secretbox.New("the-old-secret-key-0123")
	newBox, _ := secretbox.New("the-new-secret-key-4567")
	secrets := []string{"whsec_one", "whsec_two"}
	for i, plain := range secrets {
		sealed, _ := oldBox.Seal(plain)
		src := models.Source{WorkspaceID: 1, Name: "src", Kind: "token", SecretEnc: sealed}
		if err := st.SourceCreate(ctx, &src); err != nil {
			t.Fatal(err)
		}
		if i == 1 { // a source mid-rotation also has a previous secret
			prev, _ := oldBox.Seal("whsec_previous")
			st.DB().Exec(`UPDATE sources SET previous_secret_enc = ? WHERE id = ?`, prev, src.ID)
		}
	}
	token, _ := oldBox.Seal("crm-token")
	st.DB().Exec(`UPDATE destinations SET api_token_enc = ? WHERE workspace_id = 1`, token)

	n, err := st.SecretsReseal(ctx, func(sealed []byte) ([]byte, error) {
		plain, err := oldBox.Open(sealed)
		if err != nil {
			return nil, err
		}
		return newBox.Seal(plain)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Fatalf("resealed %d secrets, want 4 (two source secrets, one previous secret, one CRM token)", n)
	}
	rows := []struct{ Enc []byte }{}
	st.DB().Raw(`SELECT secret_enc AS enc FROM sources UNION ALL SELECT previous_secret_enc FROM sources WHERE previous_secret_enc IS NOT NULL
		UNION ALL SELECT api_token_enc FROM destinations WHERE api_token_enc IS NOT NULL`).Scan(&rows)
	for _, r := range rows {
		if _, err := newBox.Open(r.Enc); err != nil {
			t.Errorf("a secret does not open with the new key: %v", err)
		}
		if _, err := oldBox.Open(r.Enc); err == nil {
			t.Error("a secret still opens with the old key")
		}
	}
	// A wrong old key changes nothing.
	if _, err := st.SecretsReseal(ctx, func(sealed []byte) ([]byte, error) {
		plain, err := oldBox.Open(sealed)
		return []byte(plain), err
	}); err == nil {
		t.Fatal("resealing with the wrong old key succeeded")
	}
}

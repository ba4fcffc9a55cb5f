// Package apierr writes the relay's JSON answers: the OpenAI-style error
// body (with the request's id, where the OpenAI SDKs read it) and plain
// JSON values, never cached.
package apierr

import (
	"encoding/json"
	"net/http"

	"github.com/trickle-dev/trickle/relay/internal/reqlog"
)

// Body is the OpenAI-style error body. Code names a refusal precisely
// ("token_expired", "model_not_allowed"); Param the request field it is
// about.
type Body struct {
	Error struct {
		Message   string `json:"message"`
		Type      string `json:"type"`
		Code      string `json:"code,omitempty"`
		Param     string `json:"param,omitempty"`
		RequestID string `json:"request_id,omitempty"`
	} `json:"error"`
}

// Write answers status with an error of type typ saying msg.
func Write(w http.ResponseWriter, status int, typ, msg string) {
	WriteCoded(w, status, typ, "", "", msg)
}

// WriteCoded answers status with an error of type typ, with its code and
// the request field (param) it is about.
func WriteCoded(w http.ResponseWriter, status int, typ, code, param, msg string) {
	var e Body
	e.Error.Message, e.Error.Type, e.Error.Code, e.Error.Param = msg, typ, code, param
	e.Error.RequestID = w.Header().Get(reqlog.Header)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(e)
}

// JSON answers 200 with v.
func JSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(v)
}

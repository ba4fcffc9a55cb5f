package chat

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadTakesEachFieldFromTheMemberItsTagNames(t *testing.T) {
	body := `{"model":"m","stream":true,"seed":7,"max_tokens":5,"max_completion_tokens":6,"stop":"x",
		"tool_choice":"none","tools":[{"type":"function","function":{"name":"f"}}],
		"messages":[{"role":"user","content":"hi","name":"n"}]}`
	var members map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(body), &members))
	var got, want Request
	require.NoError(t, Read(members, &got))
	require.NoError(t, json.Unmarshal([]byte(body), &want), "encoding/json is the oracle")
	require.Equal(t, want, got)
}

func TestReadRefusesAMemberOfTheWrongTypeNamingIt(t *testing.T) {
	var req Request
	err := Read(map[string]json.RawMessage{"model": json.RawMessage(`"m"`), "stream": json.RawMessage(`"yes"`)}, &req)
	var re *RequestError
	require.True(t, errors.As(err, &re), "%v", err)
	require.Equal(t, "stream", re.Param)
	require.Equal(t, "invalid_json", re.Code)
	require.ErrorIs(t, err, ErrBadRequest)
}

package element

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/jsonx"
	"github.com/trickle-dev/trickle/wasm/protocol"
)

// TestParseCommandReadsEveryAttributeTheContractSendsGo: the page sends
// each attribute of the contract table that has a command key under that
// key (answer.js's request(), from contract.js's COMMAND_ATTRIBUTES);
// ParseCommand must read each one, or the attribute is silently lost.
func TestParseCommandReadsEveryAttributeTheContractSendsGo(t *testing.T) {
	keys := 0
	for _, a := range protocol.Attributes {
		if a.Key == "" {
			continue
		}
		keys++
		value := jsonx.AppendString(nil, "x")
		if a.Bool() {
			value = []byte("true")
		}
		c, err := ParseCommand(`{"t":"` + string(protocol.Ask) + `",` + string(jsonx.AppendString(nil, a.Key)) + `:` + string(value) + `}`)
		require.NoError(t, err, a.Name)
		require.False(t, reflect.DeepEqual(c, Command{Kind: protocol.Ask}), "%s (command key %q) is not read by ParseCommand", a.Name, a.Key)
	}
	require.NotZero(t, keys)
}

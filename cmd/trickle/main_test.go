package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHelpListsTheCommandsOneLineEach(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"-help"}, {"help"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			require.Equal(t, 0, run(args, nil, &out, &errOut))
			require.Empty(t, errOut.String())
			lines := strings.Split(out.String(), "\n")
			for name := range commands {
				n := 0
				for _, l := range lines {
					if strings.HasPrefix(l, "  "+name+" ") {
						n++
					}
				}
				require.Equal(t, 1, n, "one line for %s in:\n%s", name, out.String())
			}
			require.NotContains(t, out.String(), "-heartbeat", "the list, not serve's flags")
		})
	}
}

func TestHelpCommandPrintsWhatCommandHelpPrints(t *testing.T) {
	for name := range commands {
		t.Run(name, func(t *testing.T) {
			var viaHelp, viaHelpErr, viaFlag, viaFlagErr bytes.Buffer
			require.Equal(t, 0, run([]string{"help", name}, nil, &viaHelp, &viaHelpErr))
			require.Equal(t, 0, run([]string{name, "--help"}, nil, &viaFlag, &viaFlagErr))
			require.NotEmpty(t, viaHelp.String())
			require.Equal(t, viaFlag.String(), viaHelp.String())
			require.Empty(t, viaHelpErr.String())
			require.Empty(t, viaFlagErr.String())
			require.Contains(t, viaHelp.String(), "trickle "+name)
		})
	}
}

func TestUnknownCommandsAreRefusedWithTheList(t *testing.T) {
	for _, args := range [][]string{{"serv"}, {"help", "serv"}} {
		var out, errOut bytes.Buffer
		require.Equal(t, 2, run(args, nil, &out, &errOut))
		require.Contains(t, errOut.String(), `unknown command "serv"`)
		require.Contains(t, errOut.String(), "  replay ")
		require.Empty(t, out.String())
	}
}

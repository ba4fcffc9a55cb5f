package relay_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
)

// docsBlock is the first fenced block of lang after heading in a doc.
func docsBlock(t *testing.T, doc, heading, lang string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", doc))
	require.NoError(t, err)
	text := string(b)
	i := strings.Index(text, "\n"+heading+"\n")
	require.NotEqual(t, -1, i, "docs/%s has the heading %q", doc, heading)
	m := regexp.MustCompile("(?s)\n```" + lang + "\n(.*?)\n```\n").FindStringSubmatch(text[i:])
	require.NotNil(t, m, "docs/%s has a %s block under %q", doc, lang, heading)
	return m[1]
}

// The Node code docs/security.md gives a backend mints a token the relay
// accepts; the same code with another secret is refused saying why.
func TestTheNodeMintingExampleInTheSecurityDocMintsATokenTheRelayAccepts(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("node is not installed (CI=true runs this)")
		}
		t.Fatal("node is needed to run the docs' example")
	}
	code := docsBlock(t, "security.md", "### Minting tokens in Node", "js")
	dir := t.TempDir()
	script := code + "\nprocess.stdout.write(mintToken(process.env.SECRET, 'alice', 120));\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mint.mjs"), []byte(script), 0o644))
	mint := func(secret string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, "mint.mjs")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "SECRET="+secret)
		out, err := cmd.Output()
		require.NoError(t, err)
		return string(out)
	}
	secret := strings.Repeat("k", 32)
	_, base := start(t, relay.WithAuthSecret([]byte(secret)))
	chat := base + "/v1/chat/completions?answer=short"

	resp := post(t, chat, hello, "Authorization", "Bearer "+mint(secret))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	evs, err := events(resp.Body)
	require.NoError(t, err)
	require.NotEmpty(t, evs)

	r := refusalOf(t, post(t, chat, hello, "Authorization", "Bearer "+mint(strings.Repeat("x", 32))), http.StatusUnauthorized)
	require.Equal(t, "token_bad_signature", r.Error.Code)
}

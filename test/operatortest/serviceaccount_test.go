package operatortest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hexagonal-operator/operator/internal/config"
)

// Deploy runs the application with the configuration `make manifests`
// renders for: ManifestsEnv said with flags, and POD_NAMESPACE set by
// hand, parse to what the environment parses to.
func TestManifestsArgsSayWhatManifestsEnvSays(t *testing.T) {
	t.Parallel()
	fromEnv, err := config.Parse([]string{"--controllers="}, func(k string) string { return ManifestsEnv[k] })
	require.NoError(t, err)
	fromArgs, err := config.Parse(append(manifestsArgs(), "--controllers="), func(string) string { return "" })
	require.NoError(t, err)
	fromArgs.OperatorNamespace = ManifestsEnv["POD_NAMESPACE"]

	assert.Equal(t, fromEnv, fromArgs)
	assert.Equal(t, "system", fromArgs.LeaderElectionNamespace)
	assert.Equal(t, "webhook-service", fromArgs.WebhookServiceName)
}

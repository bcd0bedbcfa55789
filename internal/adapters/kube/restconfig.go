package kube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// LoadRESTConfig finds the cluster the way kubebuilder operators do: the
// kubeconfig file given (the --kubeconfig flag, which defaults to
// $KUBECONFIG), else the in-cluster service account, else ~/.kube/config.
// It reads files but dials nothing.
func LoadRESTConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
		}
		return cfg, nil
	}
	if cfg, err := rest.InClusterConfig(); err == nil {
		return cfg, nil
	} else if !errors.Is(err, rest.ErrNotInCluster) {
		return nil, fmt.Errorf("load in-cluster config: %w", err)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, errors.New("no cluster configured: not in a cluster, no --kubeconfig, no $KUBECONFIG and no home folder")
	}
	path := filepath.Join(home, ".kube", "config")
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("no cluster configured: not in a cluster, no --kubeconfig or $KUBECONFIG, and %s: %w", path, err)
	}
	return cfg, nil
}

// Preflight checks, before anything starts, that the API server answers and
// accepts the operator's credentials, which informers would retry forever
// in silence. It retries other errors until ctx is done.
func Preflight(ctx context.Context, cfg *rest.Config) error {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = 5 * time.Second
	client, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("api server %s: %w", cfg.Host, err)
	}
	for {
		err := client.RESTClient().Get().AbsPath("/version").Do(ctx).Error()
		if err == nil {
			return nil
		}
		if apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) {
			return fmt.Errorf("the API server at %s refused the operator's credentials: %w", cfg.Host, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cannot reach the API server at %s: %w", cfg.Host, err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

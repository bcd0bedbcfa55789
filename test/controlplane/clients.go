package controlplane

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// ServiceAccountConfig returns a client configuration that authenticates as
// the ServiceAccount namespace/name, creating the namespace and the account
// when missing. The token comes from the TokenRequest API and lives an hour.
func (cp *ControlPlane) ServiceAccountConfig(ctx context.Context, namespace, name string) (*rest.Config, error) {
	cs := cp.Clientset()
	if err := cp.EnsureNamespace(ctx, namespace); err != nil {
		return nil, err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if _, err := cs.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create serviceaccount %s/%s: %w", namespace, name, err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("request token for serviceaccount %s/%s: %w", namespace, name, err)
	}
	return &rest.Config{
		Host:            cp.Config.Host,
		TLSClientConfig: rest.TLSClientConfig{CAData: cp.Config.CAData},
		BearerToken:     tr.Status.Token,
		QPS:             cp.Config.QPS,
	}, nil
}

// ImpersonatedConfig returns the admin configuration impersonating user with
// groups; the API server authorizes requests as that user.
func (cp *ControlPlane) ImpersonatedConfig(user string, groups ...string) *rest.Config {
	cfg := rest.CopyConfig(cp.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	return cfg
}

// EnsureNamespace creates namespace when it does not exist.
func (cp *ControlPlane) EnsureNamespace(ctx context.Context, namespace string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := cp.Clientset().CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", namespace, err)
	}
	return nil
}

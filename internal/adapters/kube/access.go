package kube

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Access is one request the operator's identity must be allowed to make.
type Access struct {
	Verb        string
	Group       string
	Resource    string
	Subresource string
	// Namespace and Name narrow the request; empty means any.
	Namespace string
	Name      string
	// GrantedBy names the manifest that grants it, for the error.
	GrantedBy string
}

// String spells the request: verb group/resource/subresource "name" in
// namespace "ns".
func (a Access) String() string {
	s := a.Verb + " " + path.Join(a.Group, a.Resource, a.Subresource)
	if a.Name != "" {
		s += fmt.Sprintf(" %q", a.Name)
	}
	if a.Namespace != "" {
		s += fmt.Sprintf(" in namespace %q", a.Namespace)
	}
	return s
}

// MissingAccessError lists what the API server refused, one line each.
type MissingAccessError struct {
	Missing []Access
}

func (e *MissingAccessError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the operator's identity lacks %d permission(s) its enabled parts use:", len(e.Missing))
	for _, a := range e.Missing {
		fmt.Fprintf(&b, "\n  cannot %s: granted by %s", a, a.GrantedBy)
	}
	return b.String()
}

// accessCheckParallelism bounds the reviews in flight: a dozen cost about
// one round trip, without a burst.
const accessCheckParallelism = 8

// CheckAccess asks, with a SelfSubjectAccessReview each, whether the
// operator's identity may make wants; it returns a *MissingAccessError
// naming every refused one, or the first error that kept it from asking.
func CheckAccess(ctx context.Context, client kubernetes.Interface, wants []Access) error {
	if client == nil {
		return errors.New("access check: a kubernetes client is required")
	}
	allowed := make([]bool, len(wants))
	errs := make([]error, len(wants))
	sem := make(chan struct{}, accessCheckParallelism)
	var wg sync.WaitGroup
	for i, want := range wants {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			allowed[i], errs[i] = review(ctx, client, want)
		})
	}
	wg.Wait()
	if i := slices.IndexFunc(errs, func(err error) bool { return err != nil }); i >= 0 {
		return fmt.Errorf("access check: %w", errs[i]) // the others failed alike
	}
	var missing []Access
	for i, want := range wants {
		if !allowed[i] {
			missing = append(missing, want)
		}
	}
	if len(missing) > 0 {
		return &MissingAccessError{Missing: missing}
	}
	return nil
}

func review(ctx context.Context, client kubernetes.Interface, want Access) (bool, error) {
	r, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb:        want.Verb,
			Group:       want.Group,
			Resource:    want.Resource,
			Subresource: want.Subresource,
			Namespace:   want.Namespace,
			Name:        want.Name,
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("review %s: %w", want, err)
	}
	return r.Status.Allowed, nil
}

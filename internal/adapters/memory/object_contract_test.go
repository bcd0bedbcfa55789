package memory_test

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/ports"
	"github.com/hexagonal-operator/operator/internal/ports/portstest"
)

// The twin passes the suite test/contract runs against the API server.
func TestObjectStoreContract(t *testing.T) {
	t.Parallel()
	portstest.RunObjectStore(t, func(t *testing.T) portstest.ObjectFixture {
		s := memory.NewObjectStore[*corev1.ConfigMap]()
		return portstest.ObjectFixture{
			Namespace: "contract",
			Reader:    s,
			Writer:    s,
			Create: func(_ context.Context, cm *corev1.ConfigMap) error {
				_, err := s.Create(cm)
				return err
			},
			SetForeignAnnotation: func(_ context.Context, key types.NamespacedName, annotation, value string) error {
				for {
					cm, err := s.Get(key)
					if err != nil {
						return err
					}
					if cm.Annotations == nil {
						cm.Annotations = map[string]string{}
					}
					cm.Annotations[annotation] = value
					if _, err = s.Update(cm); !errors.Is(err, ports.ErrConflict) {
						return err
					}
				}
			},
			Delete: func(_ context.Context, key types.NamespacedName) error { return s.Delete(key) },
			Get:    func(_ context.Context, key types.NamespacedName) (*corev1.ConfigMap, error) { return s.Get(key) },
		}
	})
}

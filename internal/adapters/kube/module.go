package kube

import (
	"go.uber.org/fx"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/hexagonal-operator/operator/internal/kubeclient"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// Module provides the clients and the writer ports. It consumes a
// *rest.Config and an [Options] from the composition root, and provides
// kubeclient.Interface, metadata.Interface, dynamic.Interface,
// ports.ReplicaSetLabeler, and the [APIServerCheck] in the value group
// "readyz".
var Module = fx.Module("kube",
	fx.Provide(
		fx.Private,
		NewClients,
	),
	fx.Provide(
		func(c *Clients) (kubeclient.Interface, metadata.Interface, dynamic.Interface) {
			return c.Kubernetes, c.Metadata, c.Dynamic
		},
		fx.Annotate(NewReplicaSetWriter, fx.As(new(ports.ReplicaSetLabeler))),
		fx.Annotate(NewAPIServerCheck, fx.As(new(ports.HealthCheck)), fx.ResultTags(`group:"readyz"`)),
	),
)

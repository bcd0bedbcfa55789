package controller

import (
	"context"

	"go.uber.org/zap"
)

type reconcileKey struct{}

type reconcileInfo struct {
	id  string
	log *zap.Logger
}

func withReconcile(ctx context.Context, id string, log *zap.Logger) context.Context {
	return context.WithValue(ctx, reconcileKey{}, reconcileInfo{id: id, log: log})
}

// LoggerFrom returns the logger of the reconcile ctx belongs to, with the
// fields controller, namespace, name and reconcileID; a no-op logger
// outside a reconcile.
func LoggerFrom(ctx context.Context) *zap.Logger {
	if info, ok := ctx.Value(reconcileKey{}).(reconcileInfo); ok {
		return info.log
	}
	return zap.NewNop()
}

// ReconcileIDFrom returns the UUID of the reconcile ctx belongs to, or "".
func ReconcileIDFrom(ctx context.Context) string {
	info, _ := ctx.Value(reconcileKey{}).(reconcileInfo)
	return info.id
}

package cache

// ClusterScoped lets the integration test hold the cluster-scoped kinds
// against the API server's discovery.
var ClusterScoped = clusterScoped

// Package kubeclienttest adapts client-go's clientset, and so its fake, to
// kubeclient.Interface, for unit tests. The operator binary never imports
// it: the clientset is what package kubeclient keeps out of it.
package kubeclienttest

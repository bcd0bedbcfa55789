{{/*
The names config/default gives its objects: the base name of config/ with
the name prefix (kustomize's namePrefix), in the namespace the operator
runs in. Every template names objects through these, so that the names
copied into RBAC resourceNames, the Deployment's environment, the webhooks'
selectors and the policies' expressions (config/default's replacements)
always agree with the objects themselves.
*/}}

{{/* The operator's namespace: namespace.name, else the release's. */}}
{{- define "hexagonal-operator.namespace" -}}
{{- .Values.namespace.name | default .Release.Namespace -}}
{{- end }}

{{/* A base name of config/ with the prefix: include "hexagonal-operator.name" (list . "webhook-service"). */}}
{{- define "hexagonal-operator.name" -}}
{{- $root := index . 0 -}}
{{- printf "%s%s" $root.Values.namePrefix (index . 1) -}}
{{- end }}

{{- define "hexagonal-operator.serviceAccountName" -}}
{{- include "hexagonal-operator.name" (list . "controller-manager") -}}
{{- end }}

{{- define "hexagonal-operator.webhookServiceName" -}}
{{- include "hexagonal-operator.name" (list . "webhook-service") -}}
{{- end }}

{{- define "hexagonal-operator.metricsServiceName" -}}
{{- include "hexagonal-operator.name" (list . "controller-manager-metrics-service") -}}
{{- end }}

{{- define "hexagonal-operator.mutatingWebhookConfigurationName" -}}
{{- include "hexagonal-operator.name" (list . "mutating-webhook-configuration") -}}
{{- end }}

{{- define "hexagonal-operator.validatingWebhookConfigurationName" -}}
{{- include "hexagonal-operator.name" (list . "validating-webhook-configuration") -}}
{{- end }}

{{/*
The leader Lease: <prefix>leader, as config/default cuts it from the name
of the Role that allows it, so that two installations with different
prefixes in one namespace keep apart.
*/}}
{{- define "hexagonal-operator.leaseName" -}}
{{- include "hexagonal-operator.name" (list . "leader") -}}
{{- end }}

{{/* The self-mode Secret, not prefixed (config/manager names it so). */}}
{{- define "hexagonal-operator.certSecretName" -}}
{{- .Values.certificates.self.secretName -}}
{{- end }}

{{/* The Pods' PriorityClass: the one given, else the chart's own. */}}
{{- define "hexagonal-operator.priorityClassName" -}}
{{- .Values.priorityClassName | default (include "hexagonal-operator.name" (list . "webhook-critical")) -}}
{{- end }}

{{/* cert-manager's objects, named after the prefix. */}}
{{- define "hexagonal-operator.issuerName" -}}
{{- include "hexagonal-operator.name" (list . "selfsigned-issuer") -}}
{{- end }}

{{- define "hexagonal-operator.servingCertName" -}}
{{- include "hexagonal-operator.name" (list . "serving-cert") -}}
{{- end }}

{{- define "hexagonal-operator.metricsCertName" -}}
{{- include "hexagonal-operator.name" (list . "metrics-cert") -}}
{{- end }}

{{/* The Secret the operator reads its webhook certificate from, outside self mode. */}}
{{- define "hexagonal-operator.webhookCertSecretName" -}}
{{- if eq .Values.certificates.mode "cert-manager" -}}
{{- include "hexagonal-operator.name" (list . "webhook-server-cert") -}}
{{- else -}}
{{- required "certificates.files.secretName is required with certificates.mode=files" .Values.certificates.files.secretName -}}
{{- end -}}
{{- end }}

{{/* The Secret of the metrics certificate, if any. */}}
{{- define "hexagonal-operator.metricsCertSecretName" -}}
{{- if eq .Values.certificates.mode "cert-manager" -}}
{{- include "hexagonal-operator.name" (list . "metrics-server-cert") -}}
{{- else if eq .Values.certificates.mode "files" -}}
{{- .Values.certificates.files.metricsSecretName -}}
{{- end -}}
{{- end }}

{{/*
The certificate mode, checked once: a typo would otherwise render self
mode's RBAC beside an operator that waits for a mounted certificate.
*/}}
{{- define "hexagonal-operator.certMode" -}}
{{- $mode := .Values.certificates.mode -}}
{{- if not (has $mode (list "self" "cert-manager" "files")) -}}
{{- fail (printf "certificates.mode must be self, cert-manager or files, not %q" $mode) -}}
{{- end -}}
{{- $mode -}}
{{- end }}

{{/*
The labels Helm's tooling reads, on every object beside the ones
config/ gives it. Not on the Pod template: a chart upgrade alone would
roll the Pods.
*/}}
{{- define "hexagonal-operator.helmLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{/* config/'s label, and Helm's. */}}
{{- define "hexagonal-operator.labels" -}}
app.kubernetes.io/name: hexagonal-operator
{{ include "hexagonal-operator.helmLabels" . }}
{{- end }}

{{/* The operator's Pods, as the Deployment, its Services, PDB and spread select them. */}}
{{- define "hexagonal-operator.selectorLabels" -}}
app.kubernetes.io/name: hexagonal-operator
control-plane: controller-manager
{{- end }}

{{/*
system:serviceaccount:<namespace>:<name> as the policies' and the
operator's Pod validator's match condition "the-operator" spells it.
*/}}
{{- define "hexagonal-operator.theOperator" -}}
request.userInfo.username == 'system:serviceaccount:' + '{{ include "hexagonal-operator.namespace" . }}' + ':' + '{{ include "hexagonal-operator.serviceAccountName" . }}'
{{- end }}

{{/* The cert-manager CA injection, on the webhook configurations and the CRD. */}}
{{- define "hexagonal-operator.injectCA" -}}
{{- if eq (include "hexagonal-operator.certMode" .) "cert-manager" -}}
cert-manager.io/inject-ca-from: {{ include "hexagonal-operator.namespace" . }}/{{ include "hexagonal-operator.servingCertName" . }}
{{- end -}}
{{- end }}

{{/*
The clientConfig of a webhook at a path: the webhook Service, and in files
mode the CA bundle given (self mode and cert-manager write their own).
*/}}
{{- define "hexagonal-operator.clientConfig" -}}
{{- $root := index . 0 -}}
{{- if and (eq (include "hexagonal-operator.certMode" $root) "files") $root.Values.certificates.files.caBundle -}}
caBundle: {{ $root.Values.certificates.files.caBundle | b64enc }}
{{ end -}}
service:
  name: {{ include "hexagonal-operator.webhookServiceName" $root }}
  namespace: {{ include "hexagonal-operator.namespace" $root }}
  path: {{ index . 1 }}
{{- end }}

{{/*
The Pod webhooks' namespace selector: kube-system, kube-public,
kube-node-lease and the operator's own namespace never, so that the
operator can start while no replica answers; podWebhooks.namespaceSelector
narrows it further.
*/}}
{{- define "hexagonal-operator.podWebhookScope" -}}
namespaceSelector:
  {{- with .Values.podWebhooks.namespaceSelector.matchLabels }}
  matchLabels:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  matchExpressions:
  - key: kubernetes.io/metadata.name
    operator: NotIn
    values:
    - kube-system
    - kube-public
    - kube-node-lease
    - {{ include "hexagonal-operator.namespace" . }}
  {{- with .Values.podWebhooks.namespaceSelector.matchExpressions }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with .Values.podWebhooks.objectSelector }}
objectSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
The chart's name, at most 63 characters (a label value).
*/}}
{{- define "ipu-operator.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The release's full name, the base of every object's name: the release name when it contains the chart's name
(a release named ipu-operator gives ipu-operator), else <release>-<chart>. At most 63 characters.
*/}}
{{- define "ipu-operator.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/*
helm.sh/chart: <name>-<version>.
*/}}
{{- define "ipu-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels every object of the release carries; pass (dict "context" $ "component" "operator").
*/}}
{{- define "ipu-operator.labels" -}}
helm.sh/chart: {{ include "ipu-operator.chart" .context }}
{{ include "ipu-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .context.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .context.Release.Service }}
app.kubernetes.io/part-of: ipu-operator
{{- end }}

{{/*
The labels that select one component's pods; pass (dict "context" $ "component" "operator").
*/}}
{{- define "ipu-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ipu-operator.name" .context }}
app.kubernetes.io/instance: {{ .context.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/*
A user's extra labels (a map) as YAML, without the keys the chart sets itself (those win); "" when none are
left.
*/}}
{{- define "ipu-operator.extraLabels" -}}
{{- $extra := omit (default dict .) "app.kubernetes.io/name" "app.kubernetes.io/instance" "app.kubernetes.io/component" "app.kubernetes.io/version" "app.kubernetes.io/managed-by" "app.kubernetes.io/part-of" "helm.sh/chart" }}
{{- if $extra }}
{{- toYaml $extra }}
{{- end }}
{{- end }}

{{/*
The operator's ServiceAccount name.
*/}}
{{- define "ipu-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "ipu-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
<repository>:<tag>, the tag defaulting to the chart's appVersion; pass (dict "image" .Values.image "context" $).
*/}}
{{- define "ipu-operator.image" -}}
{{- printf "%s:%s" .image.repository (default .context.Chart.AppVersion .image.tag) }}
{{- end }}

{{/*
vipu-sim's Deployment and Service name: <release>-vipu-sim.
*/}}
{{- define "ipu-operator.vipuProxyName" -}}
{{- printf "%s-vipu-proxy" (include "ipu-operator.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "ipu-operator.vipuSimName" -}}
{{- printf "%s-vipu-sim" .Release.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The operator's --vipu-controller values, NAME=HOST:PORT, one a line: vipuControllers, then vipu-sim when
enabled. Fails the render, saying what to do, when there is none, when a name repeats, or when
leader election is off with several replicas.
*/}}
{{- define "ipu-operator.vipuControllerArgs" -}}
{{- $controllers := list }}
{{- $names := dict }}
{{- range .Values.vipuControllers }}
{{- if hasKey $names .name }}
{{- fail (printf "vipuControllers: the name %q is given twice; each V-IPU controller needs its own name" .name) }}
{{- end }}
{{- $_ := set $names .name true }}
{{- $controllers = append $controllers (printf "%s=%s:%d" .name .host (int .port)) }}
{{- end }}
{{- if .Values.vipuSim.enabled }}
{{- if hasKey $names .Values.vipuSim.name }}
{{- fail (printf "vipuSim.name %q is also in vipuControllers; give the simulator another name" .Values.vipuSim.name) }}
{{- end }}
{{- $controllers = append $controllers (printf "%s=%s.%s.svc:%d" .Values.vipuSim.name (include "ipu-operator.vipuSimName" .) .Release.Namespace (int .Values.vipuSim.port)) }}
{{- end }}
{{- if not $controllers }}
{{- fail "no V-IPU controller: set vipuControllers (e.g. --set vipuControllers[0].name=pod64,vipuControllers[0].host=vipu.example.com,vipuControllers[0].port=8090) or --set vipuSim.enabled=true for the simulated one" }}
{{- end }}
{{- join "\n" $controllers }}
{{- end }}

{{/*
The POD map page's port, and "true" when it is enabled on an address wider than loopback (tokens reviewed,
a Service, the review permissions).
*/}}
{{- define "ipu-operator.podMapPagePort" -}}
{{- .Values.podMapPage.bindAddress | splitList ":" | last -}}
{{- end }}
{{- define "ipu-operator.podMapPageWide" -}}
{{- $host := .Values.podMapPage.bindAddress | splitList ":" | first -}}
{{- if and .Values.podMapPage.enabled (not (or (hasPrefix "127." $host) (eq $host "localhost"))) -}}
true
{{- end -}}
{{- end }}

{{/*
Checks across values that the schema cannot express; fails the render with what to change.
*/}}
{{- define "ipu-operator.validate" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) }}
{{- fail (printf "leaderElection.enabled=false with replicaCount=%d: replicas without leader election would all reconcile the same jobs; set leaderElection.enabled=true or replicaCount=1" (int .Values.replicaCount)) }}
{{- end }}
{{- if and .Values.metrics.enabled (eq (int .Values.metrics.port) (int .Values.health.port)) }}
{{- fail (printf "metrics.port and health.port are both %d; give them different ports" (int .Values.health.port)) }}
{{- end }}
{{- if and .Values.podMapPage.enabled (not (regexMatch "^[a-zA-Z0-9.-]*:[0-9]+$" .Values.podMapPage.bindAddress)) }}
{{- fail (printf "podMapPage.bindAddress %q is not HOST:PORT or :PORT (like 127.0.0.1:8095)" .Values.podMapPage.bindAddress) }}
{{- end }}
{{- if and .Values.metrics.serviceMonitor.enabled (not .Values.metrics.enabled) }}
{{- fail "metrics.serviceMonitor.enabled=true needs metrics.enabled=true (there is nothing to scrape otherwise)" }}
{{- end }}
{{- end }}

#!/usr/bin/env bash
# Applies the monitoring as code of docs/operations.md#monitoring to a project: the log-based
# metrics (monitoring/metrics/*.json), the alert policies (monitoring/alerts/*.json, each linked to
# its runbook in docs/runbooks/) and the dashboard (monitoring/dashboard.json). Idempotent: a metric
# that exists is updated; an alert policy or dashboard with the same display name is replaced.
#
#   monitoring/apply.sh <project-id> <notification-channel> [runbook-base-url]
#
# <notification-channel>: projects/<p>/notificationChannels/<id> (gcloud beta monitoring channels list).
# [runbook-base-url]: where docs/runbooks/ is readable (default: the repository's URL in RUNBOOK_BASE_URL).
# Needs gcloud with the alpha/beta components and roles/logging.configWriter + roles/monitoring.editor.
set -euo pipefail
project="${1:?usage: monitoring/apply.sh <project-id> <notification-channel> [runbook-base-url]}"
channel="${2:?usage: monitoring/apply.sh <project-id> <notification-channel> [runbook-base-url]}"
base="${3:-${RUNBOOK_BASE_URL:-https://github.com/OWNER/REPO/blob/main}}"
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

for file in "$here"/metrics/*.json; do
  name="$(basename "$file" .json)"
  if gcloud logging metrics describe "$name" --project "$project" >/dev/null 2>&1; then
    gcloud logging metrics update "$name" --project "$project" --config-from-file "$file"
  else
    gcloud logging metrics create "$name" --project "$project" --config-from-file "$file"
  fi
done

for file in "$here"/alerts/*.json; do
  out="$tmp/$(basename "$file")"
  sed -e "s#\${RUNBOOK_BASE_URL}#$base#g" -e "s#\${NOTIFICATION_CHANNEL}#$channel#g" "$file" >"$out"
  display="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["displayName"])' "$out")"
  for existing in $(gcloud alpha monitoring policies list --project "$project" --filter "displayName=\"$display\"" --format 'value(name)'); do
    gcloud alpha monitoring policies delete "$existing" --project "$project" --quiet
  done
  gcloud alpha monitoring policies create --project "$project" --policy-from-file "$out"
done

display="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["displayName"])' "$here/dashboard.json")"
for existing in $(gcloud monitoring dashboards list --project "$project" --filter "displayName=\"$display\"" --format 'value(name)'); do
  gcloud monitoring dashboards delete "$existing" --project "$project" --quiet
done
gcloud monitoring dashboards create --project "$project" --config-from-file "$here/dashboard.json"

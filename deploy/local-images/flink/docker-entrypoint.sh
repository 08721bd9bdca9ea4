#!/usr/bin/env bash
# /docker-entrypoint.sh of the local Flink base (deploy/local-images): what the official image's
# entrypoint does for this project, for a Flink assembled from Maven artifacts, which has no bin/
# scripts. Flink's own BashJavaUtils merges the configuration and sizes the JVMs, as its scripts do.
#
#   jobmanager    a standalone session JobManager, in the foreground
#   taskmanager   a TaskManager, in the foreground
#   anything else is run as given
#
# FLINK_PROPERTIES: Flink settings, one 'key: value' a line, merged into conf/config.yaml first.
# Unlike the official entrypoint this keeps spaces inside a value; a file that works there works here.
set -euo pipefail
FLINK_HOME=${FLINK_HOME:-/opt/flink}
conf=$FLINK_HOME/conf
classpath="$FLINK_HOME/lib/*"

# The results of a BashJavaUtils command, one a line.
flink_utils() {
  java -cp "$classpath" org.apache.flink.runtime.util.bash.BashJavaUtils "$@" --configDir "$conf" \
    | sed -n 's/^BASH_JAVA_UTILS_EXEC_RESULT://p'
}

merge_flink_properties() {
  local line key settings=()
  while IFS= read -r line; do
    line=$(sed 's/^[[:space:]]*//; s/[[:space:]]*$//' <<< "$line")
    if [ -z "$line" ] || [ "${line:0:1}" = "#" ]; then
      continue
    fi
    key=$(sed 's/[[:space:]]*$//' <<< "${line%%:*}")
    settings+=(-D "$key=$(sed 's/^[[:space:]]*//' <<< "${line#*:}")")
  done <<< "${FLINK_PROPERTIES:-}"
  if [ ${#settings[@]} -gt 0 ]; then
    flink_utils UPDATE_AND_GET_FLINK_CONFIGURATION "${settings[@]}" > "$conf/config.yaml.new"
    mv "$conf/config.yaml.new" "$conf/config.yaml"
  fi
}

# Runs a Flink process in the foreground with the JVM options Flink's scripts would give it: the
# defaults, env.java.opts.all, then the role's own, and the memory Flink computes for the role.
run() {
  local role=$1 main=$2 flat resources opts=()
  flat=$(flink_utils UPDATE_AND_GET_FLINK_CONFIGURATION -flatten)
  for key in env.java.default-opts.all env.java.opts.all "env.java.opts.$role"; do
    # Word splitting is wanted: these hold JVM flags.
    # shellcheck disable=SC2207
    opts+=($(awk -v k="$key: " 'index($0, k) == 1 { print substr($0, length(k) + 1) }' <<< "$flat"))
  done
  resources=$(flink_utils "GET_${3}_RESOURCE_PARAMS")
  # shellcheck disable=SC2046
  exec java "${opts[@]}" $(sed -n 1p <<< "$resources") \
    -Dlog4j.configurationFile="$conf/log4j-console.properties" \
    -cp "$classpath" "$main" --configDir "$conf" $(sed -n 2p <<< "$resources")
}

case "${1:-help}" in
  help)
    echo "usage: jobmanager | taskmanager | COMMAND [ARGS...]  (settings: FLINK_PROPERTIES)"
    ;;
  jobmanager)
    merge_flink_properties
    run jobmanager org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint JM
    ;;
  taskmanager)
    merge_flink_properties
    run taskmanager org.apache.flink.runtime.taskexecutor.TaskManagerRunner TM
    ;;
  *)
    exec "$@"
    ;;
esac

#!/usr/bin/env bash
# The container's entrypoint, on top of the official Flink image's /docker-entrypoint.sh:
#
#   jobmanager    the JobManager (session mode), then 'snapshots submit': it starts the job under its
#                 fixed id, or resumes it from the newest retained checkpoint or savepoint. Without
#                 ZooKeeper this is what makes a restarted JobManager task pick the job up again.
#   taskmanager   a TaskManager, as Flink runs it.
#   protect       the ECS scale-in protection sidecar of a TaskManager task (snapshots protect --help).
#   anything else is handed to /docker-entrypoint.sh.
set -euo pipefail
jar=/opt/flink/usrlib/snapshots-job.jar
cli=/opt/snapshots/snapshots-cli.jar
snapshots() { java -cp "/opt/flink/lib/*:$cli" dev.snapshots.cli.Cli "$@"; }

case "${1:-jobmanager}" in
  jobmanager)
    /docker-entrypoint.sh jobmanager &
    jobmanager=$!
    # ECS stops a task with SIGTERM: hand it to the JobManager and wait for it to finish.
    trap 'kill -TERM "$jobmanager"; wait "$jobmanager"' TERM INT
    # Word splitting is wanted: SNAPSHOTS_JOB_ARGS holds flags.
    # shellcheck disable=SC2086
    snapshots submit --rest http://localhost:8081 --jar "$jar" ${SNAPSHOTS_JOB_ARGS:?set SNAPSHOTS_JOB_ARGS to the job flags}
    wait "$jobmanager"
    ;;
  taskmanager)
    exec /docker-entrypoint.sh taskmanager
    ;;
  protect)
    exec java -cp "/opt/flink/lib/*:$cli" dev.snapshots.cli.Cli protect --rest "${SNAPSHOTS_REST:-http://localhost:8081}"
    ;;
  *)
    exec /docker-entrypoint.sh "$@"
    ;;
esac

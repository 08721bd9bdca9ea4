#!/usr/bin/env bash
# The container's entrypoint, on top of the official Flink image's /docker-entrypoint.sh:
#
#   jobmanager    the JobManager (session mode), then 'snapshots submit': it starts the job under its
#                 fixed id, or resumes it from the newest retained checkpoint or savepoint. Without
#                 ZooKeeper this is what makes a restarted JobManager task pick the job up again.
#                 With SNAPSHOTS_CHECKPOINT_BASE set, this JobManager checkpoints under a directory of
#                 its own, $SNAPSHOTS_CHECKPOINT_BASE/jm-<start time>-<random>: one still stopping
#                 never deletes what its successor resumed from, and 'submit' searches them all.
#                 SNAPSHOTS_FROM_SAVEPOINT: where a job with no checkpoint of its own yet starts (a
#                 new job version); once it has its own, a restart resumes from those.
#   taskmanager   a TaskManager, as Flink runs it.
#   protect       the ECS scale-in protection sidecar of a TaskManager task (snapshots protect --help).
#   anything else is handed to /docker-entrypoint.sh.
set -euo pipefail
jar=/opt/flink/usrlib/snapshots-job.jar
cli=/opt/snapshots/snapshots-cli.jar
snapshots() { java -cp "/opt/flink/lib/*:$cli" dev.snapshots.cli.Cli "$@"; }

case "${1:-jobmanager}" in
  jobmanager)
    if [ -n "${SNAPSHOTS_CHECKPOINT_BASE:-}" ]; then
      incarnation="jm-$(date -u +%Y%m%dT%H%M%SZ)-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
      # The official entrypoint appends FLINK_PROPERTIES to the configuration, one setting a line.
      export FLINK_PROPERTIES="${FLINK_PROPERTIES:-}
state.checkpoints.dir: ${SNAPSHOTS_CHECKPOINT_BASE%/}/${incarnation}"
      echo "snapshots: this JobManager checkpoints under ${SNAPSHOTS_CHECKPOINT_BASE%/}/${incarnation}"
    fi
    : "${SNAPSHOTS_JOB_ARGS:?set SNAPSHOTS_JOB_ARGS to the job flags}"
    /docker-entrypoint.sh jobmanager &
    jobmanager=$!
    # Word splitting is wanted: SNAPSHOTS_JOB_ARGS holds flags.
    # shellcheck disable=SC2086
    snapshots submit --rest http://localhost:8081 --jar "$jar" \
      ${SNAPSHOTS_FROM_SAVEPOINT:+--from-savepoint "$SNAPSHOTS_FROM_SAVEPOINT"} $SNAPSHOTS_JOB_ARGS &
    submit=$!
    # ECS stops a task with SIGTERM. 'release' cancels the job and waits for its tasks to end
    # first: a JobManager that stops under a running job leaves TaskManagers that refuse the job
    # its successor resumes (snapshots release --help). Then the JobManager gets the SIGTERM. Both
    # run in the background because bash runs a trap only between commands, and 'submit' may
    # wait minutes for another JobManager to stop.
    trap 'kill -TERM "$submit" 2>/dev/null; snapshots release --rest http://localhost:8081 || true
          kill -TERM "$jobmanager" 2>/dev/null; wait "$jobmanager"; exit $?' TERM INT
    if ! wait "$submit"; then
      # Without its job this JobManager is of no use: stopping it makes ECS start another.
      echo "snapshots: submit failed; stopping the JobManager" >&2
      kill -TERM "$jobmanager"
    fi
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

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
#                 The program (snapshots submit --help): SNAPSHOTS_SQL, a SQL script's text; or
#                 SNAPSHOTS_JOB_ARGS, the bundled job's flags, or for a jar of your own
#                 (SNAPSHOTS_JAR, a path in the image) "--pipeline P --job-version N --store URI --
#                 its own arguments".
#   taskmanager   a TaskManager, as Flink runs it.
#   protect       the ECS scale-in protection sidecar of a TaskManager task (snapshots protect --help).
#   anything else is handed to /docker-entrypoint.sh.
#
# With the REST API behind TLS (the ECS module's rest_tls), SNAPSHOTS_REST_KEYSTORE,
# SNAPSHOTS_REST_TRUSTSTORE and SNAPSHOTS_REST_TLS_PASSWORD name the client's stores: the commands
# present its certificate, and the JobManager's own REST API is https://localhost:8081.
set -euo pipefail
jar=${SNAPSHOTS_JAR:-/opt/flink/usrlib/snapshots-job.jar}
cli=/opt/snapshots/snapshots-cli.jar
classpath="/opt/flink/lib/*:$cli"
snapshots() { java -cp "$classpath" dev.snapshots.cli.Cli "$@"; }
rest=http://localhost:8081
[ -z "${SNAPSHOTS_REST_TRUSTSTORE:-}" ] || rest=${rest/http:/https:}

case "${1:-jobmanager}" in
  jobmanager)
    if [ -n "${SNAPSHOTS_CHECKPOINT_BASE:-}" ]; then
      incarnation="jm-$(date -u +%Y%m%dT%H%M%SZ)-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
      # The official entrypoint appends FLINK_PROPERTIES to the configuration, one setting a line.
      export FLINK_PROPERTIES="${FLINK_PROPERTIES:-}
state.checkpoints.dir: ${SNAPSHOTS_CHECKPOINT_BASE%/}/${incarnation}"
      echo "snapshots: this JobManager checkpoints under ${SNAPSHOTS_CHECKPOINT_BASE%/}/${incarnation}"
    fi
    if [ -n "${SNAPSHOTS_SQL:-}" ]; then
      # A file of its own for 'submit', which sends the text on to the JobManager.
      script=$(mktemp --suffix=.sql)
      printf '%s\n' "$SNAPSHOTS_SQL" > "$script"
      program=(--sql "$script")
    else
      : "${SNAPSHOTS_JOB_ARGS:?set SNAPSHOTS_SQL to a SQL script, or SNAPSHOTS_JOB_ARGS to the job flags}"
      # Word splitting is wanted: SNAPSHOTS_JOB_ARGS holds flags.
      read -r -a program <<< "$SNAPSHOTS_JOB_ARGS"
    fi
    # The one way this JobManager stops, whatever the state ('submit' waiting, returned, or
    # failed): 'release' cancels the job and waits for its tasks to end first, because a
    # JobManager that stops under a running job leaves TaskManagers that refuse the job its
    # successor resumes (snapshots release --help); then the JobManager gets the SIGTERM. Nothing
    # here may fail under 'set -e': 'submit' may have returned and the JobManager may have
    # stopped already. Running twice is harmless (a second 'release' finds no job).
    jobmanager=
    submit=
    stop_jobmanager() {
      [ -z "$submit" ] || kill -TERM "$submit" 2>/dev/null || true
      await_submit
      snapshots release --rest "$rest" || true
      [ -z "$jobmanager" ] || kill -TERM "$jobmanager" 2>/dev/null || true
    }
    # 'submit' stopped with its run request in flight waits (up to 30 s) for the JobManager's answer:
    # the JobManager runs the program (a SQL script compiles there) whether or not anyone listens,
    # and a job it starts after 'release' has read the job list would escape the cancel. A bound of
    # its own here, for a JVM that does not stop: ECS allows at most 120 s for the whole stop.
    await_submit() {
      local deadline=$((SECONDS + 35))
      while [ -n "$submit" ] && kill -0 "$submit" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do
        sleep 0.2
      done
      # Past the bound: no JVM outlives the container's stop.
      [ -z "$submit" ] || ! kill -0 "$submit" 2>/dev/null || kill -KILL "$submit" 2>/dev/null || true
    }
    # The container ends with the JobManager, with its status; but a stop it was asked for (ECS,
    # docker stop) ends 0 once the JobManager answered the entrypoint's SIGTERM as Flink's JVM
    # does (128 + 15): that stop went as designed, and a non-zero status would read as a crash.
    asked_to_stop=
    await_jobmanager() {
      status=143
      [ -z "$jobmanager" ] || { status=0; wait "$jobmanager" || status=$?; }
      if [ -n "$asked_to_stop" ] && [ "$status" = 143 ]; then status=0; fi
      exit "$status"
    }
    # ECS stops a task with SIGTERM. The JobManager and 'submit' run in the background because
    # bash runs a trap only between commands (a 'wait' is interrupted), and 'submit' may wait
    # minutes for another JobManager to stop.
    trap 'asked_to_stop=1; stop_jobmanager; await_jobmanager' TERM INT
    /docker-entrypoint.sh jobmanager &
    jobmanager=$!
    # java itself runs in the background, not the function: $! must be the JVM, which a SIGTERM
    # stops (a function runs in a subshell of its own, which would die alone and leave the JVM
    # behind).
    java -cp "$classpath" dev.snapshots.cli.Cli submit --rest "$rest" --jar "$jar" \
      ${SNAPSHOTS_FROM_SAVEPOINT:+--from-savepoint "$SNAPSHOTS_FROM_SAVEPOINT"} "${program[@]}" &
    submit=$!
    submitted=0
    wait "$submit" || submitted=$?
    submit= # it has returned: nothing left to stop
    if [ "$submitted" != 0 ]; then
      # Without its job this JobManager is of no use: stopping it makes ECS start another.
      echo "snapshots: submit failed; stopping the JobManager" >&2
      stop_jobmanager
    fi
    await_jobmanager
    ;;
  taskmanager)
    exec /docker-entrypoint.sh taskmanager
    ;;
  protect)
    exec java -cp "$classpath" dev.snapshots.cli.Cli protect --rest "${SNAPSHOTS_REST:-$rest}"
    ;;
  *)
    exec /docker-entrypoint.sh "$@"
    ;;
esac

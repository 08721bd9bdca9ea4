# What must stay secret reaches the containers through their task definitions' secrets: ECS reads
# each from Secrets Manager with the execution role when the task starts and sets it as the
# container's environment variable. A task definition, a plan and the state hold the ARN only.
#
#   SNAPSHOTS_SQL   a SQL script kept in Secrets Manager (sql_script_secret_arn), the JobManager's
#   SNAPSHOTS_REST_KEYSTORE_BASE64, SNAPSHOTS_REST_TRUSTSTORE_BASE64, SNAPSHOTS_REST_TLS_PASSWORD
#                   Flink's REST TLS material (rest_tls), for the containers that serve or call the
#                   REST API: the JobManager, the protect sidecars, the lifecycle operator task

locals {
  rest_tls = var.rest_tls != null
  # Flink's REST settings, in every Flink process's configuration (FLINK_PROPERTIES); the stores
  # and their password are added in the containers that have them (rest_tls_prelude).
  rest_tls_properties = local.rest_tls ? [
    "security.ssl.rest.enabled: true",
    "security.ssl.rest.authentication-enabled: ${var.rest_tls.mutual_authentication}",
    # Forward secrecy (Flink's default is TLS_RSA_WITH_AES_128_CBC_SHA alone), for RSA and EC keys.
    "security.ssl.algorithms: TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
  ] : []
  rest_tls_secrets = local.rest_tls ? [
    { name = "SNAPSHOTS_REST_KEYSTORE_BASE64", valueFrom = var.rest_tls.keystore_secret_arn },
    { name = "SNAPSHOTS_REST_TRUSTSTORE_BASE64", valueFrom = var.rest_tls.truststore_secret_arn },
    { name = "SNAPSHOTS_REST_TLS_PASSWORD", valueFrom = var.rest_tls.password_secret_arn },
  ] : []
  # Flink reads its stores from files: before the container's own entrypoint, the stores are
  # written where only the container's user can read them, and their paths and password are added
  # to Flink's configuration (used by the JobManager) and given to the command line by name
  # (SNAPSHOTS_REST_KEYSTORE, SNAPSHOTS_REST_TRUSTSTORE, SNAPSHOTS_REST_TLS_PASSWORD). Then the
  # entrypoint the container would have run runs, with its arguments.
  rest_tls_prelude = <<-EOT
    set -eu
    umask 077
    d=/tmp/snapshots-rest-tls
    mkdir -p "$d"
    printf '%s' "$SNAPSHOTS_REST_KEYSTORE_BASE64" | base64 -d > "$d/keystore.p12"
    printf '%s' "$SNAPSHOTS_REST_TRUSTSTORE_BASE64" | base64 -d > "$d/truststore.p12"
    unset SNAPSHOTS_REST_KEYSTORE_BASE64 SNAPSHOTS_REST_TRUSTSTORE_BASE64
    export SNAPSHOTS_REST_KEYSTORE="$d/keystore.p12" SNAPSHOTS_REST_TRUSTSTORE="$d/truststore.p12"
    export FLINK_PROPERTIES="$${FLINK_PROPERTIES:-}
    security.ssl.rest.keystore: $d/keystore.p12
    security.ssl.rest.keystore-password: $SNAPSHOTS_REST_TLS_PASSWORD
    security.ssl.rest.key-password: $SNAPSHOTS_REST_TLS_PASSWORD
    security.ssl.rest.truststore: $d/truststore.p12
    security.ssl.rest.truststore-password: $SNAPSHOTS_REST_TLS_PASSWORD"
    exec "$@"
  EOT
  # A container's entryPoint behind the prelude: its arguments are the entrypoint it replaces.
  rest_tls_entry_point = ["bash", "-c", local.rest_tls_prelude, "snapshots-rest-tls"]

  sql_secret = var.sql_script_secret_arn != ""
  # What the JobManager's 'snapshots submit' runs (the image's entrypoint): a script, in the task
  # definition or from Secrets Manager, or flags.
  program_environment = concat(
    var.sql_script != "" ? [{ name = "SNAPSHOTS_SQL", value = var.sql_script }] : [],
    var.sql_script == "" && !local.sql_secret ? [{ name = "SNAPSHOTS_JOB_ARGS", value = local.job_args }] : [],
    var.job_jar != "" ? [{ name = "SNAPSHOTS_JAR", value = var.job_jar }] : [],
  )
  jobmanager_secrets = concat(
    local.sql_secret ? [{ name = "SNAPSHOTS_SQL", valueFrom = var.sql_script_secret_arn }] : [],
    local.rest_tls_secrets,
  )
  secret_arns = distinct([for s in local.jobmanager_secrets : s.valueFrom])

  # ECS reads the secrets with the execution role: those secrets only, and the module's key (if
  # they are under it) through Secrets Manager only.
  secrets_policy = length(local.secret_arns) == 0 ? {} : {
    snapshots-secrets = jsonencode({
      Version = "2012-10-17"
      Statement = concat([{
        Sid      = "ReadTheContainersSecrets"
        Effect   = "Allow"
        Action   = ["secretsmanager:GetSecretValue"]
        Resource = local.secret_arns
        }], [for key in local.kms_key : {
        Sid       = "DecryptThemThroughSecretsManager"
        Effect    = "Allow"
        Action    = ["kms:Decrypt"]
        Resource  = [key]
        Condition = { StringEquals = { "kms:ViaService" = "secretsmanager.${local.region}.${data.aws_partition.current.dns_suffix}" } }
      }])
    })
  }

  # ECS refuses a task definition over 64 KiB. Counted in bytes (base64 has 4 characters for every 3),
  # of the containers alone; a script's characters outside ASCII count as the bytes they are.
  container_definitions_bytes = { for k, c in local.containers : k => nonsensitive(ceil(length(base64encode(jsonencode(c))) * 3 / 4)) }
}

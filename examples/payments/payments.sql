-- Payments per merchant and minute, for Flink's own SQL Client, run where payments.jsonl is:
--   $FLINK_HOME/bin/sql-client.sh --jar snapshots-sql-0.3.0-1.20-SNAPSHOT.jar -f payments.sql
-- SqlClientITCase runs this file, with its store pointed at the test's.

-- The client waits for the INSERT to end before it exits: the script ends with its job.
SET 'table.dml-sync' = 'true';
-- Parts are published when a checkpoint completes: an unbounded source needs checkpoints.
SET 'execution.checkpointing.interval' = '10 s';
-- TIMESTAMP_LTZ rows fall into the same windows on every machine, as with ./snapshots run --sql.
SET 'table.local-time-zone' = 'UTC';

CREATE TABLE payments (
  payment_id STRING,
  merchant   STRING,
  payer      STRING,
  amount     DECIMAL(10, 2),
  paid_at    TIMESTAMP(3),
  WATERMARK FOR paid_at AS paid_at - INTERVAL '5' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'payments.jsonl',
  'format' = 'json'
);

CREATE TABLE merchant_minutes (
  window_start TIMESTAMP(3) NOT NULL,
  window_end   TIMESTAMP(3) NOT NULL,
  merchant     STRING NOT NULL,
  payments     BIGINT NOT NULL,
  payers       BIGINT NOT NULL,
  total        DECIMAL(38, 2),
  largest      DECIMAL(10, 2),
  PRIMARY KEY (window_start, window_end, merchant) NOT ENFORCED
) WITH (
  'connector' = 'canonical-snapshots',
  'store' = 'file:///tmp/snapshots-payments',
  'pipeline' = 'payments',
  'job-version' = '1',
  'buckets' = '4'
);

INSERT INTO merchant_minutes
SELECT window_start, window_end, merchant,
  COUNT(*), COUNT(DISTINCT payer), SUM(amount), MAX(amount)
FROM TABLE(TUMBLE(TABLE payments, DESCRIPTOR(paid_at), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end, merchant;

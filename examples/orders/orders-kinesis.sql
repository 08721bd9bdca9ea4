-- Orders per customer and minute, read from Kinesis: each shard's rows watermarked on their own,
-- late and unreadable records published as dead letters beside the snapshots.
-- KinesisTableITCase runs this file against kinesalite, with its stream, endpoint and store.
-- The source's 'window' is the TUMBLE's size: it closes windows of that length (a late row is a
-- dead letter), and the snapshots table below holds its rows to it.
CREATE TABLE orders (customer STRING, amount DECIMAL(10, 2), order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND
) WITH ('connector' = 'snapshots-kinesis', 'format' = 'json',
  'stream.arn' = 'arn:aws:kinesis:eu-west-1:123456789012:stream/orders', 'window' = '1 min',
  'dead-letters.store' = 's3://my-bucket/snapshots',
  'dead-letters.pipeline' = 'orders', 'dead-letters.job-version' = '1');

CREATE TABLE per_minute (window_start TIMESTAMP(3) NOT NULL,
  window_end TIMESTAMP(3) NOT NULL, customer STRING NOT NULL,
  orders BIGINT NOT NULL, revenue DECIMAL(38, 2),
  PRIMARY KEY (window_start, window_end, customer) NOT ENFORCED
) WITH ('connector' = 'canonical-snapshots', 'store' = 's3://my-bucket/snapshots',
  'pipeline' = 'orders', 'job-version' = '1', 'buckets' = '2');

INSERT INTO per_minute
SELECT window_start, window_end, customer, COUNT(*), SUM(amount)
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(order_time), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end, customer;

-- Orders per customer and hour, published exactly once per (window, bucket) as Parquet.
-- Run from the repository's root:  ./snapshots run --sql examples/orders/orders.sql
-- Then:  ./snapshots inspect file:///tmp/snapshots-orders/

-- The shop's order events, one JSON object a line (examples/orders/orders.jsonl). Event time is
-- order_time; the watermark trails it by 5 seconds, more than events are ever out of order.
CREATE TABLE orders (
  order_id   STRING,
  customer   STRING,
  product    STRING,
  amount     DECIMAL(10, 2),
  quantity   INT,
  coupon     STRING,
  gift       BOOLEAN,
  order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/orders/orders.jsonl',
  'format' = 'json'
);

-- One row per customer and hour. Amounts are DECIMAL: their sums are exact, so every execution
-- computes the same bytes (a DOUBLE sum depends on the order rows are added in).
CREATE VIEW customer_hours AS
SELECT
  window_start,
  window_end,
  customer,
  COUNT(*)                                 AS orders,
  COUNT(DISTINCT product)                  AS products,
  SUM(amount)                              AS revenue,
  MAX(amount)                              AS largest_order,
  SUM(quantity)                            AS items,
  AVG(CAST(quantity AS DOUBLE))            AS mean_quantity,
  MAX(coupon)                              AS coupon,
  SUM(CASE WHEN gift THEN 1 ELSE 0 END) > 0 AS any_gift,
  CAST(window_start AS DATE)               AS order_date,
  MAX(order_time)                          AS last_order
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(order_time), INTERVAL '1' HOUR))
GROUP BY window_start, window_end, customer;

-- The snapshots: one Parquet object per hour and bucket of customers, at a key that names the
-- work (orders/v=1/schema=1/date=2026-12-01/window=0000/part-00000-of-00004-....parquet).
-- The primary key, window columns aside, sorts and buckets a window's rows. The window's length
-- is the rows' (window_end - window_start): the store records it at the first write.
CREATE TABLE customer_hourly (
  window_start  TIMESTAMP(3) NOT NULL,
  window_end    TIMESTAMP(3) NOT NULL,
  customer      STRING NOT NULL,
  orders        BIGINT NOT NULL,
  products      BIGINT NOT NULL,
  revenue       DECIMAL(38, 2),
  largest_order DECIMAL(10, 2),
  items         INT,
  mean_quantity DOUBLE,
  coupon        STRING,
  any_gift      BOOLEAN,
  order_date    DATE,
  last_order    TIMESTAMP(3),
  PRIMARY KEY (window_start, window_end, customer) NOT ENFORCED
) WITH (
  'connector' = 'canonical-snapshots',
  'store' = 'file:///tmp/snapshots-orders',
  'pipeline' = 'orders',
  'job-version' = '1',
  'buckets' = '4'
);

INSERT INTO customer_hourly SELECT * FROM customer_hours;

// A small telemetry producer for docker-compose (Node 20, no dependencies): creates the stream if
// needed, then puts one JSON event per interval, spread over devices, forever. It speaks the
// Kinesis JSON protocol directly. kinesalite wants a request to look signed (an Authorization header
// with its three parts, and a date) but checks no signature, so a placeholder stands in for one.
//
//   node produce.js --endpoint http://kinesis:4567 --stream telemetry [--shards 2] [--per-second 20]
'use strict';
const http = require('http');

function arg(name, fallback) {
  const i = process.argv.indexOf('--' + name);
  return i >= 0 ? process.argv[i + 1] : fallback;
}
const endpoint = new URL(arg('endpoint', 'http://127.0.0.1:4567'));
const stream = arg('stream', 'telemetry');
const shards = Number(arg('shards', 2));
const perSecond = Number(arg('per-second', 20));

function call(operation, body) {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const amzDate = new Date().toISOString().replace(/[-:]|\.\d{3}/g, ''); // 20261130T140503Z
    const req = http.request({
      host: endpoint.hostname, port: endpoint.port, method: 'POST', path: '/',
      headers: {
        'Content-Type': 'application/x-amz-json-1.1',
        'X-Amz-Target': 'Kinesis_20131202.' + operation,
        'X-Amz-Date': amzDate,
        'Authorization': 'AWS4-HMAC-SHA256 Credential=local/' + amzDate.slice(0, 8)
          + '/us-east-1/kinesis/aws4_request, SignedHeaders=host;x-amz-date, Signature=0',
        'Content-Length': Buffer.byteLength(data),
      },
    }, (res) => {
      let text = '';
      res.on('data', (c) => { text += c; });
      res.on('end', () => (res.statusCode < 300 ? resolve(JSON.parse(text || '{}')) : reject(new Error(operation + ': ' + text))));
    });
    req.on('error', reject);
    req.end(data);
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  for (;;) { // the emulator may still be starting
    try {
      await call('CreateStream', { StreamName: stream, ShardCount: shards });
      break;
    } catch (e) {
      if (/ResourceInUseException/.test(e.message)) break;
      console.log('waiting for Kinesis at ' + endpoint.href + ': ' + e.message);
      await sleep(1000);
    }
  }
  console.log('producing ' + perSecond + ' events/s into ' + stream);
  for (let i = 0; ; i++) {
    const device = 'dev-' + String(i % 50).padStart(5, '0');
    const event = { device, ts: Date.now(), value: Math.round(Math.random() * 100000) / 1000, bytes: i % 1500, latency_ms: i % 250 };
    await call('PutRecord', { StreamName: stream, PartitionKey: device, Data: Buffer.from(JSON.stringify(event)).toString('base64') })
      .catch((e) => console.log('put failed, continuing: ' + e.message));
    await sleep(1000 / perSecond);
  }
}
main();

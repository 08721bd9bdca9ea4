// A request-rewriting proxy in front of kinesalite, for local use only (Node 20, no dependencies).
//
//   node kinesis-shim.js --port P --target http://127.0.0.1:Q [--host H]   (H: 127.0.0.1 unless set)
//
// Why: newer clients (the Flink Kinesis connector's KinesisStreamsSource, AWS SDK v2 calls made
// with streamARN(...)) identify the stream only by "StreamARN". kinesalite predates StreamARN, drops
// it as an unknown field, and then fails ("Either NextToken or StreamName should be provided", ...).
// So for every JSON body with StreamARN and no StreamName we add StreamName = the part after
// "stream/". kinesalite drops fields an operation does not know, so adding it is always harmless,
// and it does not verify SigV4 signatures, so changing a signed body is fine.
// Responses are passed back untouched (status, headers, body).
// Clients must use JSON, not CBOR (Java: -Daws.cborEnabled=false): CBOR bodies are forwarded as is.
'use strict';
const http = require('http');

function arg(name) {
  const i = process.argv.indexOf('--' + name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const port = Number(arg('port') || 0);
const target = new URL(arg('target') || '');

// Keep-alive to kinesalite: the SDK and the Flink source poll GetRecords in tight loops.
const agent = new http.Agent({ keepAlive: true });
const rewrittenOps = new Set();

// The body with StreamName added, or null when it needs no change (not JSON, or nothing to add).
function rewrite(body) {
  let data;
  try {
    data = JSON.parse(body.toString('utf8'));
  } catch (e) {
    return null;
  }
  if (data === null || typeof data !== 'object' || typeof data.StreamARN !== 'string' || data.StreamName) {
    return null;
  }
  const i = data.StreamARN.indexOf(':stream/');
  if (i < 0) {
    return null;
  }
  data.StreamName = data.StreamARN.slice(i + ':stream/'.length);
  return Buffer.from(JSON.stringify(data), 'utf8');
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let body = Buffer.concat(chunks);
    const headers = { ...req.headers };
    const rewritten = rewrite(body);
    if (rewritten) {
      body = rewritten;
      // The body changed size; a stale Content-Length would truncate it or hang kinesalite.
      delete headers['transfer-encoding'];
      headers['content-length'] = String(body.length);
      const op = String(req.headers['x-amz-target'] || '?');
      if (!rewrittenOps.has(op)) {
        rewrittenOps.add(op); // once per operation: shows in the log which calls needed it
        console.log('rewriting StreamARN to StreamName for ' + op);
      }
    }
    const upstream = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent },
      (up) => {
        res.writeHead(up.statusCode, up.headers);
        up.pipe(res);
      });
    upstream.on('error', (e) => {
      // Tell the client (and the test log) why, rather than resetting the connection.
      console.error('forwarding to ' + target.href + ' failed: ' + e.message);
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'text/plain' });
      }
      res.end('kinesis-shim: ' + e.message);
    });
    upstream.end(body);
  });
});

server.listen(port, arg('host') || '127.0.0.1', () => {
  // The readiness line Kinesalite.java waits for; with --port 0 it carries the port chosen.
  console.log('shim listening on ' + server.address().port);
});

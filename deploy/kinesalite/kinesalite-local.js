// Starts kinesalite 3.3.3 in memory, on 127.0.0.1 unless --host says otherwise (docker-compose).
// Why not node_modules/kinesalite/cli.js: it has no host option and listens on every interface.
//
//   node kinesalite-local.js --port P [--host H] [--shardLimit N] [--createStreamMs MS] ...
//
// Options are kinesalite's own (see its cli.js --help); numeric ones are passed as numbers.
// --port 0 picks a free port; the port actually bound is printed as "kinesalite listening on P".
'use strict';
const kinesalite = require('kinesalite');

const options = {};
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i += 2) {
  const name = args[i].replace(/^--/, '');
  const value = args[i + 1];
  options[name] = /^\d+$/.test(value) ? Number(value) : value;
}
if (options.path) {
  // LevelDB on disk needs leveldown's native build, which npm does not run here; tests want memory anyway.
  console.error('kinesalite-local.js keeps data in memory only; --path is not supported');
  process.exit(2);
}

const host = options.host || '127.0.0.1';
delete options.host;
const server = kinesalite(options);
server.listen(options.port || 0, host, () => {
  console.log('kinesalite listening on ' + server.address().port);
});

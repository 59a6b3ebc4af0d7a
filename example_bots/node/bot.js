'use strict';
// A take5 arena bot in Node.js, written from the protocol file alone (proto/take5/v1/bot.proto; a
// copy ships in ./proto so that this folder works on its own, e.g. in a container).
//
// Strategy ("greedy"): play the card that costs the fewest bull heads if it were placed now; on a tie
// the highest such card. Take the row with the fewest bull heads. Draft the card with the most.
//
// Run:  npm install && TAKE5_LISTEN=unix:/tmp/node.sock node bot.js   (or: ./run --listen ADDRESS)
// The referee starts it through ./run:  referee match example_bots/node example_bots/random

const fs = require('fs');
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTO_DIRS = [path.join(__dirname, 'proto'), path.join(__dirname, '..', '..', 'proto')];
const protoDir = PROTO_DIRS.find((dir) => fs.existsSync(path.join(dir, 'take5', 'v1', 'bot.proto')));
const definition = protoLoader.loadSync('take5/v1/bot.proto', {
  includeDirs: [protoDir],
  keepCase: true, // field names as in the .proto: time_limit_ms, not timeLimitMs
  enums: String, // phase arrives as 'PHASE_DRAFT'
  defaults: true, // absent repeated fields arrive as []
  oneofs: true,
});
const take5 = grpc.loadPackageDefinition(definition).take5.v1;

const NAME = 'node-greedy';
const VERSION = require('./package.json').version;
const PROTOCOL_VERSION = '1.0';
const MAX_ROW_LENGTH = 5;

function log(...args) {
  console.error(new Date().toISOString(), NAME, ...args); // stderr: the referee keeps it in a log
}

// ---- rules (docs/rules.md 1 and 4) ----------------------------------------------------------------

function bullHeads(card) {
  if (card === 55) return 7;
  if (card % 11 === 0) return 5;
  if (card % 10 === 0) return 3;
  if (card % 5 === 0) return 2;
  return 1;
}

const penalty = (cards) => cards.reduce((sum, card) => sum + bullHeads(card), 0);

// Index of the row whose last card is the highest one below `card`, or -1.
function targetRow(rows, card) {
  let best = -1;
  let bestEnd = 0;
  rows.forEach((row, index) => {
    const end = row[row.length - 1];
    if (end < card && end > bestEnd) {
      best = index;
      bestEnd = end;
    }
  });
  return best;
}

// Fewest bull heads, then fewest cards, then the lowest index (the referee's default too).
function cheapestRow(rows) {
  let best = 0;
  rows.forEach((row, index) => {
    const a = [penalty(row), row.length];
    const b = [penalty(rows[best]), rows[best].length];
    if (a[0] < b[0] || (a[0] === b[0] && a[1] < b[1])) best = index;
  });
  return best;
}

function costNow(rows, card) {
  const index = targetRow(rows, card);
  if (index < 0) return penalty(rows[cheapestRow(rows)]);
  return rows[index].length >= MAX_ROW_LENGTH ? penalty(rows[index]) : 0;
}

// ---- the service ------------------------------------------------------------------------------

const rowsOf = (view) => view.rows.map((row) => row.cards);

const service = {
  Handshake(call, callback) {
    log('handshake from', call.request.referee, 'protocol', call.request.protocol_version);
    callback(null, {
      name: NAME,
      version: VERSION,
      author: 'take5 arena',
      sdk: `grpc-js ${require('@grpc/grpc-js/package.json').version}`,
      protocol_version: PROTOCOL_VERSION,
    });
  },

  PickCard(call, callback) {
    try {
      const view = call.request.view;
      if (view.phase === 'PHASE_DRAFT') {
        const pool = view.pool.slice().sort((a, b) => bullHeads(b) - bullHeads(a) || a - b);
        callback(null, { card: pool[0] });
        return;
      }
      const rows = rowsOf(view);
      let best = null;
      for (const card of view.hand) {
        const cost = costNow(rows, card);
        if (best === null || cost < best.cost || (cost === best.cost && card > best.card)) {
          best = { card, cost };
        }
      }
      callback(null, { card: best.card });
    } catch (error) {
      log('PickCard failed:', error);
      callback({ code: grpc.status.INTERNAL, details: `node bot error: ${error.message}` });
    }
  },

  ChooseRow(call, callback) {
    callback(null, { row: cheapestRow(rowsOf(call.request.view)) });
  },

  GameOver(call, callback) {
    const r = call.request;
    log(`game ${r.game_id} over: place ${r.places[r.seat]} with ${r.scores[r.seat]} points`);
    callback(null, {});
  },
};

// ---- serving ----------------------------------------------------------------------------------

function listenAddress() {
  const i = process.argv.indexOf('--listen');
  if (i >= 0 && process.argv[i + 1]) return process.argv[i + 1];
  return process.env.TAKE5_LISTEN || '';
}

function main() {
  const address = listenAddress();
  if (!address) {
    console.error('no address to serve on: set TAKE5_LISTEN or pass --listen (unix:/path.sock or host:port)');
    process.exit(2);
  }
  const server = new grpc.Server();
  server.addService(take5.Bot.service, service);
  server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (error) => {
    if (error) {
      log('cannot listen on', address, error.message);
      process.exit(1);
    }
    log('serving on', address);
  });
  const stop = () => {
    log('stopping');
    server.tryShutdown(() => process.exit(0));
    setTimeout(() => process.exit(0), 1000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main();

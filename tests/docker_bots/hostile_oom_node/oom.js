'use strict';
// Hostile Node.js bot: plays as example_bots/node (copied next to this file by the test), but from
// its second PickCard on allocates memory without end (Buffers live outside V8's heap limit, and
// filling them touches every page) until the container is OOM-killed. Expected: a `resource` fault
// naming OOMKilled, the memory limit and exit code 137, as for a Python bot.
const grpc = require('@grpc/grpc-js');

const addService = grpc.Server.prototype.addService;
const hoard = [];
let calls = 0;
grpc.Server.prototype.addService = function (service, implementation) {
  const pickCard = implementation.PickCard;
  implementation.PickCard = (call, callback) => {
    calls += 1;
    if (calls >= 2) {
      console.error('eating memory');
      for (;;) hoard.push(Buffer.alloc(1 << 20, 1));
    }
    return pickCard(call, callback);
  };
  return addService.call(this, service, implementation);
};

require('./bot.js');

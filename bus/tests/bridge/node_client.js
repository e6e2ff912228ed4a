// A JavaScript bridge client from npm, in Node, against a SockJS bridge
// (bridge/sockjs_http.rs): the same round as the browser's page, with
// SockJS held to one transport.
//
//     NODE_PATH=<node_modules> node node_client.js PORT CLIENT TRANSPORT
//
// CLIENT is v4 (@vertx/eventbus-bridge-client.js) or v3
// (vertx3-eventbus-client). Prints one JSON object: what each step saw,
// and the transport SockJS used.
'use strict';

const [port, client, transport] = process.argv.slice(2);
const EventBus = require(client === 'v4' ? '@vertx/eventbus-bridge-client.js' : 'vertx3-eventbus-client');
const name = `node-${client}-${transport}`;

const result = {errors: [], news: null, echo: null, failed: null, asked: null, answered: null};
let done = 0;
const eb = new EventBus(`http://127.0.0.1:${port}/eventbus`, {transports: [transport]});
function finish() {
  if (++done === 5) {
    eb.close();
    process.stdout.write(JSON.stringify(result) + '\n');
    process.exit(0);
  }
}
setTimeout(() => {
  process.stdout.write(JSON.stringify(Object.assign({timedOut: true}, result)) + '\n');
  process.exit(0);
}, 20000);
eb.onerror = (e) => { result.errors.push(e); finish(); };
eb.onopen = () => {
  result.transport = eb.sockJSConn && eb.sockJSConn.transport;
  eb.registerHandler(`client.${name}`, (err, msg) => {
    result.asked = {address: msg.address, body: msg.body};
    msg.reply({answer: msg.body.q * 2});
  });
  eb.registerHandler('news', (err, msg) => {
    result.news = {body: msg.body, headers: msg.headers || null};
    finish();
  });
  eb.send('echo', {n: 1}, {h: 'v'}, (err, reply) => {
    result.echo = {err: err, body: reply && reply.body, headers: reply && reply.headers};
    finish();
  });
  eb.send('fail', {}, (err, reply) => { result.failed = err; finish(); });
  eb.send('secret', {});
  // After the registration reached the bridge (frames go in order).
  eb.send('ask.client', {address: `client.${name}`, body: {q: 21}}, (err, reply) => {
    result.answered = {err: err, body: reply && reply.body};
    finish();
  });
  eb.publish('publish.trigger', {n: 7});
};

// Waiting on a condition, not on time: check() is evaluated now and again after every event the
// given clients emit (and, with pollMs, that often too, for state no event announces, as
// Awaitility polls); the promise fails after timeoutMs with what the last check said.
const EVENTS = ['message', 'accepted', 'failed', 'retry', 'state', 'synced', 'caughtUp', 'chunk', 'stream', 'read', 'chat', 'presence', 'error'];

export function until(clients, check, { timeoutMs = 60_000, what = 'the condition', pollMs = 0 } = {}) {
  return new Promise((resolve, reject) => {
    const offs = [];
    let timer = null;
    let poll = null;
    let last;
    const done = (fn, value) => { clearTimeout(timer); clearInterval(poll); for (const off of offs) off(); fn(value); };
    const evaluate = () => {
      try {
        last = check();
        if (last === true || (last && last.ok === true)) done(resolve, last);
      } catch (e) { done(reject, e); }
    };
    for (const c of [].concat(clients)) for (const e of EVENTS) offs.push(c.on(e, evaluate));
    timer = setTimeout(() => done(reject, new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last check: ${JSON.stringify(last)}`)), timeoutMs);
    if (pollMs > 0) poll = setInterval(evaluate, pollMs);
    evaluate();
  });
}

/** The first event of this type for which match(event) holds. */
export function next(client, type, match = () => true, timeoutMs = 60_000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { off(); reject(new Error(`no ${type} event within ${timeoutMs} ms`)); }, timeoutMs);
    const off = client.on(type, (e) => { if (match(e)) { clearTimeout(timer); off(); resolve(e); } });
  });
}

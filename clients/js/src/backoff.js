// Exponential backoff with full jitter: a delay drawn uniformly from [0, min(cap, base * 2^attempt)).
// Full jitter spreads a crowd of clients that lost the same server over the whole window, so
// they do not come back in lockstep (the thundering herd a fixed delay makes).
export function fullJitter(attempt, baseMs, capMs, random = Math.random) {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * ceiling);
}

export function delay(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}

// Stores keep what must survive the client: each chat's cursor (the last contiguous seq and its
// messageId) with its recent messages, and every send not yet accepted. A store is four async
// calls over JSON values; memoryStore() is the default, localStorageStore() and indexedDbStore()
// keep them across a page reload. Any object with the same four methods will do.

export function memoryStore() {
  const map = new Map();
  return {
    async get(key) { return map.has(key) ? structuredClone(map.get(key)) : undefined; },
    async set(key, value) { map.set(key, structuredClone(value)); },
    async delete(key) { map.delete(key); },
    async keys(prefix) { return [...map.keys()].filter((k) => k.startsWith(prefix)); },
  };
}

export function localStorageStore({ storage = globalThis.localStorage, prefix = 'waterline:' } = {}) {
  if (!storage) throw new Error('localStorage is not available here');
  return {
    async get(key) {
      const raw = storage.getItem(prefix + key);
      return raw == null ? undefined : JSON.parse(raw);
    },
    async set(key, value) { storage.setItem(prefix + key, JSON.stringify(value)); },
    async delete(key) { storage.removeItem(prefix + key); },
    async keys(p) {
      const out = [];
      for (let i = 0; i < storage.length; i++) {
        const k = storage.key(i);
        if (k != null && k.startsWith(prefix + p)) out.push(k.slice(prefix.length));
      }
      return out;
    },
  };
}

export function indexedDbStore({ name = 'waterline', indexedDB = globalThis.indexedDB } = {}) {
  if (!indexedDB) throw new Error('IndexedDB is not available here');
  const STORE = 'kv';
  const opened = new Promise((resolve, reject) => {
    const req = indexedDB.open(name, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  const run = (mode, work) => opened.then((db) => new Promise((resolve, reject) => {
    const tx = db.transaction(STORE, mode);
    const result = work(tx.objectStore(STORE));
    tx.oncomplete = () => resolve(result.result);
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  }));
  return {
    get: (key) => run('readonly', (s) => s.get(key)),
    async set(key, value) { await run('readwrite', (s) => s.put(value, key)); },
    async delete(key) { await run('readwrite', (s) => s.delete(key)); },
    async keys(prefix) {
      const all = await run('readonly', (s) => s.getAllKeys(IDBKeyRange.bound(prefix, prefix + '\uffff')));
      return all.map(String);
    },
  };
}

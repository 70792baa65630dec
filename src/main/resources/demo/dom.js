// Elements are built from data without ever parsing data as HTML: a string child becomes a text
// node and an attribute is set with setAttribute, so a message body can never become markup.
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value == null || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  el.append(...children.flat().filter((c) => c != null && c !== false));
  return el;
}

export const byId = (id) => document.getElementById(id);

/** Runs fn once per microtask however often it is asked: many events in a row, one repaint. */
export function coalesce(fn) {
  let queued = false;
  return () => {
    if (queued) return;
    queued = true;
    queueMicrotask(() => { queued = false; fn(); });
  };
}

export function shortTime(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

/** A time of today as shortTime gives it; of another day with its date before it ("3 Dec, 14:05"). */
export function dayTime(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  if (d.toDateString() === new Date().toDateString()) return shortTime(iso);
  return `${d.toLocaleDateString([], { day: 'numeric', month: 'short' })}, ${shortTime(iso)}`;
}

/** A correlation id; crypto.randomUUID exists only in secure contexts, getRandomValues everywhere. */
export function newId() {
  if (globalThis.crypto?.randomUUID) return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

// The proof that nothing was lost, as the Java load generator's Reconciler gives it (the cases in
// load-tests/reconcile-cases.json are judged alike by both): every accepted message is in its
// chat's history (G1: durable acceptance) and held by every recipient after a final resync (G3:
// recovery); receptions past the first are counted as duplicates (legal on the wire).
export function reconcile(accepted, historyByChat, heldByUser, receivedCounts) {
  const lost = [];
  let expectedDeliveries = 0;
  const setOf = (m, k) => (m instanceof Map ? m.get(k) : m[k]) ?? new Set();
  for (const a of accepted) {
    if (!has(setOf(historyByChat, a.chatId), a.messageId)) {
      lost.push({ messageId: a.messageId, chatId: a.chatId, missingFrom: 'history', guarantee: 'G1' });
    }
    for (const r of a.recipients) {
      expectedDeliveries++;
      if (!has(setOf(heldByUser, r), a.messageId)) lost.push({ messageId: a.messageId, chatId: a.chatId, missingFrom: r, guarantee: 'G3' });
    }
  }
  let duplicatesSeen = 0;
  for (const counts of values(receivedCounts)) {
    for (const n of values(counts)) if (n > 1) duplicatesSeen += n - 1;
  }
  return { accepted: accepted.length, expectedDeliveries, lost, duplicatesSeen, clean: lost.length === 0 };
}

function has(set, id) { return set instanceof Set ? set.has(id) : set.includes(id); }
function values(m) { return m instanceof Map ? [...m.values()] : Object.values(m ?? {}); }

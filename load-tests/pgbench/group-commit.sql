-- pgbench script: one group-commit transaction of :batch one-to-one sends, statement for
-- statement what IngestRepository.commitInTransaction runs (see setup.sql for the sends), in
-- the same three round trips: BEGIN and the three reads pipelined, the four writes pipelined,
-- then COMMIT (pipelines need pgbench -M extended or prepared).
\set base random(1, 1000000000000)
\set w :client_id % :writers
\startpipeline
BEGIN;
-- USED_KEYS: one primary-key probe per key
SELECT count(*) FROM ceiling_sends(:base, :batch, :w, :writers, :pairs) u
CROSS JOIN LATERAL (SELECT 1 FROM send_idempotency i
                    WHERE i.sender_id = u.sender_id AND i.correlation_id = u.correlation_id LIMIT 1) k;
-- LOCK_CHATS
SELECT chat_id, last_seq FROM chats
WHERE chat_id IN (SELECT chat_id FROM ceiling_sends(:base, :batch, :w, :writers, :pairs))
ORDER BY chat_id FOR UPDATE;
-- MEMBERS
SELECT chat_id, user_id FROM chat_members
WHERE chat_id IN (SELECT chat_id FROM ceiling_sends(:base, :batch, :w, :writers, :pairs));
\endpipeline
\startpipeline
-- RESERVE_SEQS
UPDATE chats c SET last_seq = c.last_seq + p.n
FROM (SELECT chat_id, count(*) AS n FROM ceiling_sends(:base, :batch, :w, :writers, :pairs) GROUP BY chat_id) p
WHERE c.chat_id = p.chat_id;
-- INSERT_HISTORY
INSERT INTO message_history (chat_id, seq, message_id, sender_id, correlation_id, body, sent_at)
SELECT chat_id, seq, message_id, sender_id, correlation_id, repeat('x', :payload), now()
FROM ceiling_numbered(:base, :batch, :w, :writers, :pairs);
-- INSERT_OUTBOX
INSERT INTO outbox (recipient_id, chat_id, seq, message_id, sender_id, correlation_id, body, sent_at, created_at, due_at)
SELECT recipient_id, chat_id, seq, message_id, sender_id, correlation_id, repeat('x', :payload), now(),
       clock_timestamp(), clock_timestamp() + interval '10 seconds'
FROM ceiling_numbered(:base, :batch, :w, :writers, :pairs);
-- CLAIM_KEYS
INSERT INTO send_idempotency (sender_id, correlation_id, chat_id, seq, message_id, sent_at)
SELECT sender_id, correlation_id, chat_id, seq, message_id, now()
FROM ceiling_numbered(:base, :batch, :w, :writers, :pairs)
ORDER BY sender_id, correlation_id
ON CONFLICT (sender_id, correlation_id) DO NOTHING;
\endpipeline
COMMIT;

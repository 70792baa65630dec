-- The PostgreSQL-only ceiling: a scratch database with Waterline's own schema (the Flyway
-- migrations are applied first), :pairs one-to-one chats, and the sends of one group-commit
-- batch as functions, so that group-commit.sql writes exactly the rows IngestRepository writes.
INSERT INTO chats (chat_id) SELECT 'pc-' || k FROM generate_series(0, :pairs - 1) k;
INSERT INTO chat_members (chat_id, user_id)
SELECT 'pc-' || k, 'pu-' || (2 * k + m) FROM generate_series(0, :pairs - 1) k, generate_series(0, 1) m;

-- One batch of `batch` sends by writer `writer` of `writers`: as in the server, each writer owns
-- its own chats (the server shards chats over its writers), so writers never wait on each other.
CREATE FUNCTION ceiling_sends(base bigint, batch int, writer int, writers int, pairs int)
RETURNS TABLE (i int, chat_id text, sender_id text, recipient_id text, correlation_id text, message_id text)
LANGUAGE sql IMMUTABLE AS $$
    SELECT g, 'pc-' || k, 'pu-' || (2 * k + g % 2), 'pu-' || (2 * k + 1 - g % 2),
           'pb-' || base || '-' || g, md5(base || '-' || g)
    FROM generate_series(1, batch) g,
         LATERAL (SELECT ((base + g) % (pairs / writers)) * writers + writer AS k) c
$$;

-- The same sends with their seq, once RESERVE_SEQS has moved each chat's last_seq in this
-- transaction: a chat's n sends take the n seqs up to its new last_seq, in batch order.
CREATE FUNCTION ceiling_numbered(base bigint, batch int, writer int, writers int, pairs int)
RETURNS TABLE (chat_id text, seq bigint, message_id text, sender_id text, recipient_id text, correlation_id text)
LANGUAGE sql STABLE AS $$
    SELECT s.chat_id,
           c.last_seq - count(*) OVER (PARTITION BY s.chat_id) + row_number() OVER (PARTITION BY s.chat_id ORDER BY s.i),
           s.message_id, s.sender_id, s.recipient_id, s.correlation_id
    FROM ceiling_sends(base, batch, writer, writers, pairs) s JOIN chats c ON c.chat_id = s.chat_id
$$;

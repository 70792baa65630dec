-- The offline event's fan-out, moved out of the group commit (hooks.OfflineFanouts). A message of
-- a chat with offline hooks used to insert one delivery per hook and per recipient without a live
-- session inside its own group commit: ten offline hooks on a 500-member chat made each message
-- 5,010 rows, so that batch timed out and every other sender sharing its writer was refused. Now the
-- commit inserts one row here per offline hook and message, carrying the recipients who had no live
-- session then (bounded by the chat's members and its hooks), and the fan-out writes the deliveries
-- in transactions of its own, one fan-out row each, taking senders in turn.
CREATE TABLE hook_offline_fanouts (
    id          BIGSERIAL   PRIMARY KEY,
    hook_id     TEXT        NOT NULL,       -- no foreign key, as for hook_deliveries (V7): the fan-out joins the hook
    chat_id     TEXT        NOT NULL,
    message_id  TEXT        NOT NULL,
    seq         BIGINT      NOT NULL,
    sender_id   TEXT        NOT NULL,       -- whose message: the fan-out takes senders in turn
    user_ids    TEXT[]      NOT NULL,       -- the recipients without a live session when the message was accepted
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- Senders in turn: the oldest fan-out of each sender, found by a skip over this index (one probe a
-- sender, however long one sender's backlog is).
CREATE INDEX hook_offline_fanouts_by_sender ON hook_offline_fanouts (sender_id, id);

-- Each row is inserted by a group commit and deleted by the fan-out moments later, as the outbox's
-- rows are (V3): vacuum often, without pauses.
ALTER TABLE hook_offline_fanouts SET (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0
);

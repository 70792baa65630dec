-- Hooks (PROTOCOL.md §7): every message of a chat delivered to a service, at least once.

CREATE TABLE hooks (
    hook_id         TEXT        PRIMARY KEY,                 -- ULID minted by the server
    chat_id         TEXT        NOT NULL REFERENCES chats (chat_id),
    created_by      TEXT        NOT NULL,
    kind            TEXT        NOT NULL CHECK (kind IN ('http', 'amqp', 'mqtt', 'nats', 'kafka', 'redis')),
    target          JSONB       NOT NULL,                    -- the kind's fields (url, exchange, topic, ...), never the secret
    secret          TEXT,                                    -- the HMAC key of an http hook; never answered
    events          TEXT[]      NOT NULL,                    -- 'message' and/or 'offline'
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- The circuit breaker, shared by every node: 'closed', 'open' (until reopen_at), or
    -- 'half_open' while its one probe (probe_id) is out; a probe whose worker died is given up at
    -- probe_deadline. Changed only under this row's lock (the compare-and-set of the one probe).
    breaker         TEXT        NOT NULL DEFAULT 'closed' CHECK (breaker IN ('closed', 'open', 'half_open')),
    failures        INT         NOT NULL DEFAULT 0,          -- consecutive retryable failures
    reopen_at       TIMESTAMPTZ,
    probe_id        BIGINT,
    probe_attempt   INT,                                     -- the probe's attempt: with probe_id, the one claim that decides
    probe_deadline  TIMESTAMPTZ,
    closed_at       TIMESTAMPTZ                              -- the last close (the unhold sweep looks at recent ones)
);

-- The group commit's join (a batch's chats → their hooks) and the listing per chat.
CREATE INDEX hooks_by_chat ON hooks (chat_id);
-- The probe's search (open breakers whose cooldown ended) and the breaker sweeps: few rows.
CREATE INDEX hooks_not_closed ON hooks (reopen_at) WHERE breaker <> 'closed';

CREATE TABLE hook_deliveries (
    id              BIGSERIAL   PRIMARY KEY,                 -- the deliveryId; id % workers is a worker's slice
    -- No foreign key to hooks: its check would take a key-share lock on the hook's row in every
    -- group commit, which the recorder's breaker updates would then wait for. A hook is deleted
    -- under its chat's lock (so no group commit of that chat inserts for it afterwards), and what
    -- it leaves is purged after, in chunks; until then the claim passes those rows by.
    hook_id         TEXT        NOT NULL,
    event           TEXT        NOT NULL CHECK (event IN ('message', 'offline')),
    message_id      TEXT        NOT NULL,
    user_id         TEXT,                                    -- the offline recipient ('offline' only)
    idempotency_key TEXT        NOT NULL,                    -- <hookId>:<messageId>[:<userId>], sent with every attempt
    payload         TEXT        NOT NULL,                    -- the JSON body, built once in the message's transaction
    -- pending: waiting for its due time; held: its hook's breaker is not closed (the claim never
    -- looks at these); claimed: a worker is calling (claimed_by, until claim_deadline); dead: in
    -- the dead letters until replayed. Done deliveries are deleted.
    status          TEXT        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'held', 'claimed', 'dead')),
    attempts        INT         NOT NULL DEFAULT 0,
    due_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    claimed_by      TEXT,
    claim_deadline  TIMESTAMPTZ,
    last_error      TEXT,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    dead_at         TIMESTAMPTZ
);

-- One active delivery per key (the seed's partial unique index): a delivery is never enqueued
-- twice, nor replayed beside a live copy. Partial, so the dead letters kept for operators do not
-- weigh on every insert.
CREATE UNIQUE INDEX hook_deliveries_active_key ON hook_deliveries (idempotency_key) WHERE status <> 'dead';
-- The workers' claim: due rows, oldest due first. Held and claimed rows are not in it, so an open
-- breaker's backlog costs the claim nothing.
CREATE INDEX hook_deliveries_due ON hook_deliveries (due_at) WHERE status = 'pending';
-- Per hook: the counts of GET /api/hooks/{id}, holding and releasing a breaker's rows, the probe's
-- pick, the dead-letter list and its replay.
CREATE INDEX hook_deliveries_by_hook ON hook_deliveries (hook_id, status, due_at);
-- Claims past their deadline (a dead node, a killed worker) go back.
CREATE INDEX hook_deliveries_claims ON hook_deliveries (claim_deadline) WHERE status = 'claimed';

-- The deliveries churn like the outbox (V3): each row is inserted, claimed (an update),
-- and deleted within moments under load, and the claim reads the due index from its oldest end,
-- where the dead entries gather. Vacuum after every 5,000 dead rows, without pauses, and analyze
-- often, so the claim's plan stays the due index's ordered scan.
ALTER TABLE hook_deliveries SET (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 5000,
    autovacuum_vacuum_insert_scale_factor = 0,
    autovacuum_vacuum_insert_threshold = 20000,
    autovacuum_vacuum_cost_delay = 0,
    autovacuum_analyze_scale_factor = 0.05
);

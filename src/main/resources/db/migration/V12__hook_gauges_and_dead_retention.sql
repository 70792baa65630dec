-- Hooks' gauges and dead-letter retention without scanning hook_deliveries (hooks.DeliveryQueue).
-- The maintenance pass read the whole table every 5 s for the backlog gauges (a count(*) with
-- filters and a min(created_at)); now it reads bounded stretches of these two partial indexes.

-- Deliveries not done (pending, held, claimed), oldest first: the oldest one's age is this index's
-- first entry, and the backlog gauge counts its entries up to a cap. Partial, so the dead letters
-- kept for operators are not in it. It costs every delivery's insert and status change one more
-- index entry (the table already keeps five), the price of gauges that no longer read the table.
CREATE INDEX hook_deliveries_live ON hook_deliveries (created_at) WHERE status <> 'dead';

-- The dead letters by when they died: the retention's delete takes the oldest past
-- waterline.hooks.dead-retention from its start, and the dead gauge counts its entries up to a cap.
-- Rows enter it only when they die, so it costs the delivery path nothing.
CREATE INDEX hook_deliveries_dead ON hook_deliveries (dead_at) WHERE status = 'dead';

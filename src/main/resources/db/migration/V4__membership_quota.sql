-- How many chats each user belongs to, for the membership quota
-- (waterline.chats.max-chats-per-user): counting a user's rows in chat_members on every chat
-- creation would read up to the quota's worth of index entries per member, and two concurrent
-- creations could both see room for one more. Creating a chat or adding a member raises the
-- count of every user it adds in one upsert whose WHERE refuses a count at the quota, under the
-- row lock of each user's count (taken in user_id order, so concurrent creations never deadlock).
CREATE TABLE user_chat_counts (
    user_id  TEXT    PRIMARY KEY,
    chats    INTEGER NOT NULL CHECK (chats >= 0)
);

INSERT INTO user_chat_counts (user_id, chats)
SELECT user_id, count(*) FROM chat_members GROUP BY user_id;

-- How many of a user's chats other users added them to (chat.ChatRepository.COUNT_JOINS): at most
-- waterline.chats.max-chats-added-by-others of them, so that the rest of the membership quota stays
-- the user's own. A probe's twenty throwaway identities filled a victim's whole quota in 29 s by
-- adding them, after which the victim could neither create nor join a chat. Memberships from before
-- this count as the user's own: who added whom was not recorded.
ALTER TABLE user_chat_counts ADD COLUMN added INTEGER NOT NULL DEFAULT 0 CHECK (added >= 0 AND added <= chats);

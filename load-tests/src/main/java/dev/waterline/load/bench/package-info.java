/**
 * Benchmarks of single paths, each on a server of its own: {@code HistoryBench} (a history page in
 * a long chat with reactions on every message, seeded through the frames by an
 * {@code EntrySession} per member), {@code TransferBench} (concurrent attachment uploads and
 * downloads on a small heap) and {@code ChatsBench} (the chat list of a user in 10,000 chats, with
 * unread counts and last messages). {@code BenchHttp} makes their tokens and chats.
 */
package dev.waterline.load.bench;

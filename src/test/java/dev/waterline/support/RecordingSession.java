package dev.waterline.support;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.waterline.session.ClientSession;

/**
 * A connection that is never registered anywhere (no socket): it records the frames written to
 * it, and the Redis index reads only its user and session id.
 */
public class RecordingSession implements ClientSession {

    private final String userId;
    private final String sessionId;
    private final List<String> frames = new CopyOnWriteArrayList<>();

    public RecordingSession(String userId) {
        this(userId, "recording-" + userId);
    }

    /** A connection identity with its own session id (the Redis index keys a connection's epoch by it). */
    public RecordingSession(String userId, String sessionId) {
        this.userId = userId;
        this.sessionId = sessionId;
    }

    public List<String> frames() {
        return frames;
    }

    @Override
    public String userId() {
        return userId;
    }

    @Override
    public String sessionId() {
        return sessionId;
    }

    @Override
    public boolean isOpen() {
        return true;
    }

    @Override
    public boolean send(String frame) {
        frames.add(frame);
        return true;
    }

    @Override
    public long openedNanos() {
        return 0;
    }

    @Override
    public long lastReceivedNanos() {
        return System.nanoTime();
    }

    @Override
    public long tokenGoodUntilMillis() {
        return Long.MAX_VALUE;
    }

    @Override
    public boolean admitSend() {
        return true;
    }

    @Override
    public void answered() {
    }

    @Override
    public boolean admitRate() {
        return true;
    }

    @Override
    public void close(int code, String reason) {
    }
}

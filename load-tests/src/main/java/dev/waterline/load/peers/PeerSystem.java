package dev.waterline.load.peers;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A broker that a peer run ({@link PeerRun}) offers the chat load to instead of Waterline, so that
 * the two are measured by one generator: one queue (or durable consumer) per simulated client,
 * messages published pairwise from a sender to its partner's queue with the broker's
 * confirmation, and every queue consumed by its own client with explicit acks. One adapter per
 * broker: {@link RabbitPeer} (quorum or classic durable queues), {@link JetStreamPeer}.
 *
 * <p>Life: {@link #start} (a private broker on its own port and folder; the machine's own service
 * is never used), {@link #setUp}, then {@link #publish} from one thread for the whole load, then
 * {@link #close}, which stops the private broker by its own id.
 *
 * <p>A message's body is the run's: its first 16 bytes are the message id and its send time
 * ({@link PeerRun#bodyOf}); the adapter passes the body through untouched.
 */
interface PeerSystem extends AutoCloseable {

    /** What the adapter reports to the run, from whatever threads its client library uses. */
    interface Events {

        /** The broker confirmed message {@code id}: from now on it must reach its recipient. At most once per id. */
        void confirmed(long id);

        /** The broker refused message {@code id} (a nack, a return, a timeout): not confirmed, not counted as lost. */
        void failed(long id, String why);

        /**
         * {@code recipient} received {@code body} from its queue. Called before the message is
         * acked, once per delivery (a redelivery is reported again).
         */
        void consumed(int recipient, byte[] body);
    }

    /** The row's name in the table, e.g. "RabbitMQ 3.10 quorum queues". */
    String label();

    /** What a confirmation promises, e.g. "fsync before confirm" or "not fsynced". */
    String durability();

    /**
     * Starts the private broker with its files under {@code dir} and returns once it accepts
     * clients. Throws, with the reason, when the broker cannot be started here.
     */
    void start(Path dir) throws Exception;

    /**
     * Declares one queue (or durable consumer) per client, {@code 0 … clients-1}, and starts
     * consuming every one with explicit acks; returns once every consumer is ready.
     */
    void setUp(int clients, Events events) throws Exception;

    /**
     * Publishes {@code body} from client {@code sender} to client {@code recipient}'s queue,
     * asking for a confirmation. Called from one thread only. Returns false, with nothing sent,
     * when the sender's window of unconfirmed messages is full: the run counts that send as
     * refused, as Waterline's {@code overloaded}. Must not wait for the broker's answer.
     */
    boolean publish(int sender, int recipient, long id, byte[] body) throws Exception;

    /** The processes of the system under test (the broker's), whose CPU time the run reports. */
    List<Long> pids();

    /** The settings the table states beside the row (prefetch, window, connections, channels, …). */
    Map<String, String> settings();

    /**
     * Kills the private broker's processes at once (its own only), from any thread: a publish
     * held in a write to a broker that stopped reading then fails on its broken connection. The
     * run calls it only when a publish is held long past the load's end; {@link #close} follows.
     */
    void abort();

    /** Stops consuming, closes every connection, and stops the private broker (by its own id only). */
    @Override
    void close() throws Exception;
}

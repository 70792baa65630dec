package dev.waterline.load.clients;

/** How a simulated client treats the contract. */
public enum Behaviour {
    /** Acks every delivery at once, resyncs on reconnect. */
    NORMAL,
    /** Acks each delivery only after a delay. */
    SLOW_ACK,
    /** Never acks. */
    NEVER_ACK,
    /** Stops reading its socket partway through the run. */
    STOP_READING,
    /** Drops its connection now and then and reconnects. */
    RECONNECTING
}

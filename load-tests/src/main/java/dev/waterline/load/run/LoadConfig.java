package dev.waterline.load.run;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import dev.waterline.load.clients.WsLink;

/** One run's settings; see {@link LoadCli} for what each means. */
public record LoadConfig(
        String url,
        boolean startServer,
        Path serverJar,
        List<String> serverArgs,
        String serverJvmOpts,
        String jwtSecret,
        int clients,
        double rate,
        Duration duration,
        Duration rampUp,
        Duration drain,
        Duration outboxDrain,
        Pattern pattern,
        int groupSize,
        int payloadBytes,
        double slowAckFraction,
        Duration slowAckDelay,
        double neverAckFraction,
        double stopReadingFraction,
        double reconnectFraction,
        Duration reconnectEvery,
        Path out,
        String label,
        boolean quiet,
        WsLink.Kind transport,
        Duration pgCeiling,
        String pgAddress,
        Duration stormAt,
        int stormClients,
        List<String> urls,
        int nodes,
        Duration killNodeAt,
        String hookKind,
        double hookChats,
        String hookBroker,
        Duration hookOutageAt,
        Duration hookOutageFor,
        Duration hookDrain,
        int window,
        Duration overloadBackoff,
        Duration metricsEvery,
        double entryMix,
        double deleteMix,
        double typingShare) {

    public enum Pattern { pairwise, groups, mixed }
}

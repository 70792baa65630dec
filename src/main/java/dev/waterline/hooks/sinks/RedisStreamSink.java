package dev.waterline.hooks.sinks;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import dev.waterline.hooks.AddressGuard;
import dev.waterline.hooks.HookProperties;
import dev.waterline.metrics.WaterlineMetrics;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslVerifyMode;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import org.springframework.stereotype.Component;

/**
 * {@code redis} hooks with Lettuce: {@code XADD <stream> * payload <json> idempotencyKey <key>
 * attempt <n>}, done on the entry id Redis replies with ({@code WRONGTYPE}, a key that is not a
 * stream, is permanent). One connection per checked address and URI (credentials and database
 * from the URI), all on one set of client resources (event loops) of the sink's own, apart from
 * the server's Redis.
 */
@Component
class RedisStreamSink extends BrokerSink<RedisStreamSink.Client> {

    static final Map<String, Integer> SCHEMES = Map.of("redis", 6379, "rediss", 6379);

    record Client(RedisClient client, StatefulRedisConnection<String, String> connection) {
    }

    private final ClientResources resources = DefaultClientResources.builder().ioThreadPoolSize(2).computationThreadPoolSize(2).build();

    RedisStreamSink(AddressGuard guard, HookProperties properties, WaterlineMetrics metrics) {
        super("uri", SCHEMES, guard, properties, metrics, c -> {
            c.connection().close();
            c.client().shutdown(0, 2, TimeUnit.SECONDS);
        });
    }

    @Override
    public String kind() {
        return "redis";
    }

    @Override
    public Map<String, String> target(Map<String, String> fields) throws AddressGuard.Refused {
        var u = checkedUri(fields);
        Map<String, String> target = new LinkedHashMap<>();
        target.put("uri", u.toString());
        target.put("stream", Fields.text(fields, "stream", 1, 1024, null));
        return target;
    }

    @Override
    Client open(Endpoint e) {
        RedisURI uri = RedisURI.create(e.uri());
        uri.setHost(e.address().getHostAddress());
        uri.setPort(e.port());
        uri.setTimeout(properties.callTimeout());
        if (e.secure(Set.of("rediss"))) {
            // the connection goes to the address the guard checked: the certificate's chain is
            // verified, its host name (an address now) cannot be
            uri.setVerifyPeer(SslVerifyMode.CA);
        }
        RedisClient client = RedisClient.create(resources, uri);
        client.setOptions(ClientOptions.builder().autoReconnect(false)
                .socketOptions(SocketOptions.builder().connectTimeout(properties.connectTimeout()).build()).build());
        try {
            return new Client(client, client.connect());
        }
        catch (RuntimeException failed) {
            client.shutdown(0, 2, TimeUnit.SECONDS);
            throw failed;
        }
    }

    @Override
    Outcome publish(Client c, Call call) throws Exception {
        Map<String, String> entry = new LinkedHashMap<>();
        entry.put("payload", call.payload());
        entry.put("idempotencyKey", call.idempotencyKey());
        entry.put("attempt", Integer.toString(call.attempt()));
        String id = c.connection().async().xadd(call.target().get("stream"), entry)
                .get(properties.callTimeout().toMillis(), TimeUnit.MILLISECONDS);
        return id == null ? Outcome.retry("XADD answered no entry id") : Outcome.DONE;
    }

    @Override
    boolean healthy(Client c) {
        return c.connection().isOpen();
    }

    @Override
    Outcome failed(Exception e) {
        String why = Outcome.describe(e);
        return why.contains("WRONGTYPE") ? new Outcome.Permanent(why) : Outcome.retry(why);
    }

    @Override
    public void close() {
        super.close();
        resources.shutdown(0, 2, TimeUnit.SECONDS);
    }
}

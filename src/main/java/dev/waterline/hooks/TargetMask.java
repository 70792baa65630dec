package dev.waterline.hooks;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A hook's target as answered (POST, the list, GET one): every credential masked as {@code ***},
 * whatever the kind, so that any member of the chat may read a hook without learning what the sink
 * logs in with. The stored target is not touched (the sink needs it).
 *
 * <p>What is masked, field by field (the fields of every sink, {@link HookController#TARGET_FIELDS}):
 * <ul>
 * <li>{@code url}, {@code uri}: the URI's user-info, whatever its form ({@code user:pass@} shows
 * {@code user:***@}, {@code :pass@} shows {@code :***@}, a bare {@code token@}, which Redis, NATS
 * and AMQP read as a password or token, shows {@code ***@}); and the value of every query (or
 * fragment) parameter whose name says it is a credential ({@link #credentialName}).
 * <li>{@code bootstrapServers}: an entry written with user-info ({@code token@host:port}).
 * <li>the names a sink publishes to ({@code exchange}, {@code routingKey}, {@code topic},
 * {@code subject}, {@code stream}) and {@code jetstream}: shown as stored; none carries a secret.
 * <li>any other field: masked whole, so that a field a new sink adds is hidden until someone
 * decides it can be shown.
 * </ul>
 */
final class TargetMask {

    static final String MASK = "***";
    static final Set<String> URI_FIELDS = Set.of("url", "uri");
    static final Set<String> SERVER_LIST_FIELDS = Set.of("bootstrapServers");
    static final Set<String> PLAIN_FIELDS = Set.of("exchange", "routingKey", "topic", "subject", "jetstream", "stream");
    /** A parameter whose name (lower case, letters and digits only) holds one of these is a credential. */
    static final List<String> CREDENTIAL_WORDS = List.of("password", "passwd", "passphrase", "secret", "token", "credential",
            "signature", "apikey", "accesskey", "privatekey", "authorization");
    /** … or ends with one of these, too short to look for inside a name ({@code key} in {@code keyspace}). */
    static final List<String> CREDENTIAL_ENDINGS = List.of("key", "pass", "pwd", "auth", "sig", "jwt", "hmac");

    private TargetMask() {
    }

    /** {@code target} as answered. */
    static Map<String, String> shown(Map<String, String> target) {
        Map<String, String> shown = new LinkedHashMap<>();
        target.forEach((field, value) -> shown.put(field, shown(field, value)));
        return shown;
    }

    static String shown(String field, String value) {
        if (value == null || PLAIN_FIELDS.contains(field)) {
            return value;
        }
        if (URI_FIELDS.contains(field)) {
            return uri(value);
        }
        if (SERVER_LIST_FIELDS.contains(field)) {
            return servers(value);
        }
        return MASK;
    }

    /** A URI with its user-info's secret part and its credential parameters masked. */
    static String uri(String text) {
        URI u;
        try {
            u = new URI(text);
        }
        catch (URISyntaxException e) {
            // cannot happen for a stored target (each was parsed when its hook was created); an
            // answer must still never echo a credential, so nothing of the text is shown
            return "(unparseable)";
        }
        if (u.isOpaque() || u.getRawAuthority() == null) {
            return "(unparseable)";
        }
        String authority = u.getRawAuthority();
        String info = u.getRawUserInfo();
        StringBuilder b = new StringBuilder(u.getScheme()).append("://");
        if (info != null) {
            int colon = info.indexOf(':');
            b.append(colon < 0 ? MASK : info.substring(0, colon + 1) + MASK).append('@');
        }
        b.append(authority.substring(authority.lastIndexOf('@') + 1));
        if (u.getRawPath() != null) {
            b.append(u.getRawPath());
        }
        if (u.getRawQuery() != null) {
            b.append('?').append(parameters(u.getRawQuery()));
        }
        if (u.getRawFragment() != null) {
            b.append('#').append(parameters(u.getRawFragment()));
        }
        return b.toString();
    }

    /** {@code a=1&token=x;b=2} with the value of each credential parameter masked; separators kept. */
    static String parameters(String raw) {
        StringBuilder out = new StringBuilder();
        int start = 0;
        for (int i = 0; i <= raw.length(); i++) {
            if (i == raw.length() || raw.charAt(i) == '&' || raw.charAt(i) == ';') {
                String pair = raw.substring(start, i);
                int eq = pair.indexOf('=');
                out.append(eq >= 0 && credentialName(pair.substring(0, eq)) ? pair.substring(0, eq + 1) + MASK : pair);
                if (i < raw.length()) {
                    out.append(raw.charAt(i));
                }
                start = i + 1;
            }
        }
        return out.toString();
    }

    /** Whether a parameter named {@code raw} (as written, percent-encoded) carries a credential. */
    static boolean credentialName(String raw) {
        String name;
        try {
            name = URLDecoder.decode(raw, StandardCharsets.UTF_8);
        }
        catch (IllegalArgumentException undecodable) {
            // a name that cannot be read cannot be shown to be harmless
            return true;
        }
        String n = name.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "");
        return CREDENTIAL_WORDS.stream().anyMatch(n::contains) || CREDENTIAL_ENDINGS.stream().anyMatch(n::endsWith);
    }

    /** {@code host:port,…} with any entry's user-info masked. */
    static String servers(String list) {
        String[] entries = list.split(",", -1);
        for (int i = 0; i < entries.length; i++) {
            int at = entries[i].lastIndexOf('@');
            if (at >= 0) {
                entries[i] = MASK + entries[i].substring(at);
            }
        }
        return String.join(",", entries);
    }
}

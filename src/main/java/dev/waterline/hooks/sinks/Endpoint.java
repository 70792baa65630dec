package dev.waterline.hooks.sinks;

import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.util.Map;
import java.util.Set;

import dev.waterline.hooks.AddressGuard;

/**
 * A target's URI, parsed and checked once per call: its scheme among the kind's, its host, its
 * port (the scheme's default when absent), its credentials, and the address the SSRF guard
 * approved, which the sink connects to.
 */
record Endpoint(URI uri, String scheme, String host, int port, String user, String password, InetAddress address) {

    static final int MAX_URI = 2048;

    /**
     * Parses {@code text} (its scheme one of {@code defaultPorts}' keys) without resolving it.
     *
     * @throws IllegalArgumentException what is wrong with it
     */
    static URI parse(String field, String text, Map<String, Integer> defaultPorts, boolean credentialsAllowed) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException(field + " is required");
        }
        if (text.length() > MAX_URI) {
            throw new IllegalArgumentException(field + " is longer than " + MAX_URI + " characters");
        }
        URI u;
        try {
            u = new URI(text);
        }
        catch (URISyntaxException e) {
            throw new IllegalArgumentException(field + " is not a URI: " + e.getMessage());
        }
        String scheme = u.getScheme() == null ? null : u.getScheme().toLowerCase(java.util.Locale.ROOT);
        if (scheme == null || !defaultPorts.containsKey(scheme)) {
            throw new IllegalArgumentException(field + " must use " + String.join(" or ", new java.util.TreeSet<>(defaultPorts.keySet())));
        }
        if (u.getHost() == null || u.getHost().isBlank()) {
            throw new IllegalArgumentException(field + " names no host");
        }
        if (u.getRawUserInfo() != null && !credentialsAllowed) {
            throw new IllegalArgumentException(field + " may not carry credentials (an http hook signs with its secret)");
        }
        if (u.getRawFragment() != null) {
            throw new IllegalArgumentException(field + " may not have a fragment");
        }
        return u;
    }

    /** {@link #parse}, then the SSRF guard on its host. */
    static Endpoint resolve(String field, String text, Map<String, Integer> defaultPorts, boolean credentialsAllowed, AddressGuard guard)
            throws AddressGuard.Refused, UnknownHostException {
        URI u = parse(field, text, defaultPorts, credentialsAllowed);
        String scheme = u.getScheme().toLowerCase(java.util.Locale.ROOT);
        InetAddress address = guard.check(u.getHost());
        String user = null, password = null;
        if (u.getUserInfo() != null) {
            String info = u.getUserInfo();
            int colon = info.indexOf(':');
            user = colon < 0 ? info : info.substring(0, colon);
            password = colon < 0 ? null : info.substring(colon + 1);
        }
        return new Endpoint(u, scheme, AddressGuard.unbracketed(u.getHost()), u.getPort() < 0 ? defaultPorts.get(scheme) : u.getPort(),
                user, password, address);
    }

    boolean secure(Set<String> secureSchemes) {
        return secureSchemes.contains(scheme);
    }

    /** {@code address:port} of the checked address, IPv6 in brackets. */
    String pinnedAuthority() {
        return AddressGuard.uriHost(address) + ":" + port;
    }
}

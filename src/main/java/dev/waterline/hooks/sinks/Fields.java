package dev.waterline.hooks.sinks;

import java.net.UnknownHostException;
import java.util.Map;

import dev.waterline.hooks.AddressGuard;

/** The checks every sink makes of a new hook's fields. */
final class Fields {

    private Fields() {
    }

    /** A text field of {@code min}..{@code max} characters without control characters; {@code absent} when missing (null: required). */
    static String text(Map<String, String> fields, String name, int min, int max, String absent) {
        String v = fields.get(name);
        if (v == null) {
            if (absent == null) {
                throw new IllegalArgumentException(name + " is required");
            }
            return absent;
        }
        if (v.length() < min || v.length() > max) {
            throw new IllegalArgumentException(name + " must be " + min + "-" + max + " characters");
        }
        if (v.chars().anyMatch(Character::isISOControl)) {
            throw new IllegalArgumentException(name + " may not contain control characters");
        }
        return v;
    }

    /** The SSRF guard at creation: a name that does not resolve is refused too. */
    static void check(String host, AddressGuard guard) throws AddressGuard.Refused {
        try {
            guard.check(host);
        }
        catch (UnknownHostException e) {
            throw new IllegalArgumentException("the host " + host + " does not resolve");
        }
    }
}

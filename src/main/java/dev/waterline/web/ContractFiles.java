package dev.waterline.web;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

import io.swagger.v3.oas.annotations.Hidden;
import org.springframework.core.io.ClassPathResource;
import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The wire contract as the repository holds it: {@code docs/PROTOCOL.md} at {@code /docs/PROTOCOL.md}
 * and {@code docs/asyncapi.yaml} at {@code /docs/asyncapi.yaml} (the build copies both into the jar,
 * under {@code contract/}). Served in every mode and without a token, as {@code /v3/api-docs} is:
 * they describe the API and hold nothing about this deployment. As plain files under a policy that
 * lets nothing in them run, should a browser render one.
 */
@RestController
@Hidden
class ContractFiles {

    static final String POLICY = "default-src 'none'; sandbox; frame-ancestors 'none'";

    private final byte[] protocol = read("contract/PROTOCOL.md");
    private final byte[] asyncApi = read("contract/asyncapi.yaml");

    @GetMapping("/docs/PROTOCOL.md")
    ResponseEntity<byte[]> protocol() {
        return answer(new MediaType(MediaType.TEXT_MARKDOWN, StandardCharsets.UTF_8), protocol);
    }

    @GetMapping("/docs/asyncapi.yaml")
    ResponseEntity<byte[]> asyncApi() {
        return answer(MediaType.APPLICATION_YAML, asyncApi);
    }

    private static ResponseEntity<byte[]> answer(MediaType type, byte[] body) {
        return ResponseEntity.ok().contentType(type)
                .header("Content-Security-Policy", POLICY)
                .header("X-Content-Type-Options", "nosniff")
                .cacheControl(CacheControl.noCache())
                .body(body);
    }

    /** A jar without its contract is a broken build: refused at start rather than answered 404. */
    private static byte[] read(String path) {
        try (InputStream in = new ClassPathResource(path).getInputStream()) {
            return in.readAllBytes();
        }
        catch (IOException e) {
            throw new UncheckedIOException("the contract file " + path + " is not on the class path (the build copies docs/ there)", e);
        }
    }
}

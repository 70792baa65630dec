package dev.waterline.blobs;

import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Which adapter of {@link BlobStore} the server runs, one for every user file (a stream's blobs and
 * the attachments alike): an S3-compatible object store when {@code waterline.attachments.s3.bucket}
 * or {@code waterline.attachments.s3.endpoint} is set (PROTOCOL.md §9 names the keys), PostgreSQL
 * otherwise. The two conditions are each other's negation, so exactly one adapter is ever a bean.
 */
public final class StoreChoice {

    private StoreChoice() {
    }

    static boolean objectStore(Environment environment) {
        return hasText(environment.getProperty("waterline.attachments.s3.bucket"))
                || hasText(environment.getProperty("waterline.attachments.s3.endpoint"));
    }

    private static boolean hasText(String s) {
        return s != null && !s.isBlank();
    }

    /** An S3-compatible object store is configured. */
    public static final class ObjectStore implements Condition {
        @Override
        public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
            return objectStore(context.getEnvironment());
        }
    }

    /** None is: file contents go to PostgreSQL. */
    public static final class Database implements Condition {
        @Override
        public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
            return !objectStore(context.getEnvironment());
        }
    }
}

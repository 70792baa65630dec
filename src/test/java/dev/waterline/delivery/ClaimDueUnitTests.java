package dev.waterline.delivery;

import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ClaimDueUnitTests {

    @Test
    void theRedisTimeoutAssumedWhenUnsetIsTheClientsOwnDefault() {
        assertThat(ClaimDue.REDIS_CLIENT_DEFAULT_TIMEOUT).isEqualTo(RedisURI.DEFAULT_TIMEOUT_DURATION);
    }
}

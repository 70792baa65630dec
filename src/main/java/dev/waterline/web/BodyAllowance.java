package dev.waterline.web;

import jakarta.servlet.http.HttpServletRequest;

/**
 * A capability's endpoint that takes a larger body than {@code waterline.api.max-body-bytes} (a
 * stream's blob upload): {@link BodyLimit} bounds such a request by what the allowance says instead.
 */
public interface BodyAllowance {

    /** The largest body {@code request} may carry, or -1 when this allowance is not about it. */
    long maxBodyBytes(HttpServletRequest request);
}

/**
 * REST plumbing shared by the capabilities that expose endpoints: the error body of
 * PROTOCOL.md ({@code {"error":code,"message":…}}) for every failure, Tomcat's own refusals included, the
 * check of every request target's percent-encoding before anything parses it, the interceptors in order
 * (authentication, the REST rate, the input gate on parameters and path variables), the gate on
 * JSON bodies, the body-size limit, bounded turns at PostgreSQL, the OpenAPI description, the wire
 * contract's files (docs/PROTOCOL.md, docs/asyncapi.yaml) and the home page. Calls {@code auth}, {@code input}, {@code lifecycle} and {@code metrics}.
 */
package dev.waterline.web;

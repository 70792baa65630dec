# Stand-in for haproxy:2.6: Debian's HAProxy (bookworm, 2.6), laid out as the official image is
# (configuration in /usr/local/etc/haproxy, run in the foreground as the entrypoint). bash is
# on the PATH for the healthcheck.
FROM waterline-local/base:bookworm-haproxy
RUN install -d /usr/local/etc/haproxy && haproxy -v
EXPOSE 8080
CMD ["haproxy", "-W", "-db", "-f", "/usr/local/etc/haproxy/haproxy.cfg"]

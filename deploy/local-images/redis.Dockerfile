# Stand-in for redis:7: Debian's Redis 7.0 (bookworm), run as the redis user in /data, as the
# official image does. redis-cli is on the PATH for the healthcheck.
FROM waterline-local/base:bookworm-redis
RUN install -d -o redis -g redis /data
WORKDIR /data
USER redis
EXPOSE 6379
CMD ["redis-server", "--protected-mode", "no"]

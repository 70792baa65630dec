# Stand-in for prom/prometheus: Debian's Prometheus (bookworm), laid out as the official image
# is (entrypoint the binary, data in /prometheus, user nobody, wget for the healthcheck).
FROM waterline-local/base:bookworm-prometheus
RUN install -d -o nobody -g nogroup /prometheus
WORKDIR /prometheus
USER nobody
EXPOSE 9090
ENTRYPOINT ["/usr/bin/prometheus"]
CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]

# Stand-in for postgres:17: Debian's PostgreSQL 17 (trixie), with an entrypoint that does what
# the official image's does for the variables the stack uses (POSTGRES_USER, POSTGRES_PASSWORD,
# POSTGRES_DB; data in /var/lib/postgresql/data; listens on every interface of the container;
# password (SCRAM) authentication over TCP). pg_isready is on the PATH for the healthcheck.
FROM waterline-local/base:trixie-postgres
# The package made a cluster of its own; the entrypoint makes the one the stack uses.
RUN if [ -d /etc/postgresql/17/main ]; then pg_dropcluster 17 main; fi \
 && install -d -o postgres -g postgres -m 2775 /run/postgresql \
 && install -d -o postgres -g postgres -m 700 /var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENV PATH=/usr/lib/postgresql/17/bin:$PATH PGDATA=/var/lib/postgresql/data LANG=C.UTF-8
USER postgres
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]
CMD ["postgres"]

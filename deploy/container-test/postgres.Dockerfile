# PostgreSQL from Debian's packages on the locally made base image, for the container test only
# (image registries are out of reach there); docker-compose.yml itself uses the official image.
# It reads the same variables as the official image: POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB.
ARG BASE_IMAGE=benchgate-base:bookworm
FROM ${BASE_IMAGE}
# No default cluster: the entrypoint makes one in the volume on first start.
RUN mkdir -p /etc/postgresql-common/createcluster.d \
 && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.d/no-main.conf \
 && apt-get update \
 && apt-get install -y --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/* \
 && install -d -o postgres -g postgres -m 700 /var/lib/postgresql/data \
 && install -d -o postgres -g postgres -m 2775 /var/run/postgresql
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
USER postgres
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
ENTRYPOINT ["/bin/sh", "/usr/local/bin/postgres-entrypoint.sh"]

# Waterline's image. Two stages: the Maven wrapper builds the jar on a JDK 21 image; a JRE 21
# image runs it, from Spring Boot's layered extraction (dependencies, loader, snapshots, our
# classes: four image layers, so a change to our code rebuilds and ships only the last one).
#
#   docker build -t waterline:local .
#   docker build --build-arg JDK_IMAGE=waterline-local/jdk:21 --build-arg JRE_IMAGE=waterline-local/jre:21 .
#
# The base images are build arguments (defaults: the official Temurin 21 images) so that the
# image builds where registries cannot be reached (deploy/local-images.sh makes stand-ins).
# Written for the classic builder as well as BuildKit: no RUN --mount, no syntax directive.
ARG JDK_IMAGE=eclipse-temurin:21-jdk
ARG JRE_IMAGE=eclipse-temurin:21-jre

FROM ${JDK_IMAGE} AS build
WORKDIR /build
# The wrapper, the poms and their downloads first: this layer is rebuilt only when a pom changes.
COPY mvnw pom.xml ./
COPY parent/pom.xml parent/
COPY .mvn .mvn
RUN ./mvnw -B -q dependency:go-offline
COPY src/main src/main
COPY clients/js/src clients/js/src
COPY docs/PROTOCOL.md docs/asyncapi.yaml docs/
RUN ./mvnw -B -q -Dmaven.test.skip=true package \
 && mv target/waterline-*.jar application.jar \
 && java -Djarmode=tools -jar application.jar extract --layers --destination extracted

FROM ${JRE_IMAGE}
RUN groupadd --system waterline \
 && useradd --system --gid waterline --home-dir /app --no-create-home --shell /usr/sbin/nologin waterline
WORKDIR /app
COPY --from=build /build/extracted/dependencies/ ./
COPY --from=build /build/extracted/spring-boot-loader/ ./
COPY --from=build /build/extracted/snapshot-dependencies/ ./
COPY --from=build /build/extracted/application/ ./
USER waterline
EXPOSE 8080
# Readiness, not liveness: it goes DOWN first on shutdown and while PostgreSQL or Redis is
# unreachable, so an orchestrator stops routing here. bash's /dev/tcp: no curl needed in the image.
HEALTHCHECK --interval=5s --timeout=3s --start-period=90s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${SERVER_PORT:-8080} && printf 'GET /actuator/health/readiness HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q ' 200 '"]
# The heap follows the container's memory limit (75 %: the rest is metaspace, thread stacks,
# Netty and Tomcat buffers); an OutOfMemoryError ends the process so the orchestrator restarts
# it rather than leaving it up with dead threads. More JVM options: JAVA_TOOL_OPTIONS.
# java is PID 1 (exec form) and gets the SIGTERM itself: graceful shutdown (docs/OPERATIONS.md).
ENTRYPOINT ["java", "-XX:MaxRAMPercentage=75", "-XX:+ExitOnOutOfMemoryError", "-jar", "application.jar"]

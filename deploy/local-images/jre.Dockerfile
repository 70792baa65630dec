# Stand-in for eclipse-temurin:21-jre: Debian's OpenJDK 21 runtime (trixie). What the app's image
# needs of it: java on the PATH, bash (the HEALTHCHECK) and useradd (the non-root user).
FROM waterline-local/base:trixie-jre
ENV JAVA_HOME=/usr/lib/jvm/java-21-openjdk-amd64 LANG=C.UTF-8
ENV PATH=$JAVA_HOME/bin:$PATH
RUN java -version && command -v useradd bash
CMD ["jshell"]

# Stand-in for eclipse-temurin:21-jdk: Debian's OpenJDK 21 (trixie) on a root filesystem made by
# mmdebstrap. What the app's build stage needs of it: java and javac on the PATH, curl and unzip
# for the Maven wrapper, CA certificates for Maven Central (and any the building machine
# added locally: local-images.sh puts them in extra-ca/).
FROM waterline-local/base:trixie-jdk
ENV JAVA_HOME=/usr/lib/jvm/java-21-openjdk-amd64 LANG=C.UTF-8
ENV PATH=$JAVA_HOME/bin:$PATH
# the building machine's locally added CAs (none on most machines), for the JDK's trust store too
COPY extra-ca/ /usr/local/share/ca-certificates/
RUN update-ca-certificates && java -version && javac -version
CMD ["jshell"]

#!/bin/sh
# The local S3Proxy image's entrypoint: the environment the official image reads, as S3Proxy's
# properties.
set -eu
mkdir -p "$JCLOUDS_FILESYSTEM_BASEDIR"
cat > /tmp/s3proxy.properties <<PROPERTIES
s3proxy.endpoint=$S3PROXY_ENDPOINT
s3proxy.authorization=$S3PROXY_AUTHORIZATION
s3proxy.identity=$S3PROXY_IDENTITY
s3proxy.credential=$S3PROXY_CREDENTIAL
jclouds.provider=$JCLOUDS_PROVIDER
jclouds.filesystem.basedir=$JCLOUDS_FILESYSTEM_BASEDIR
PROPERTIES
# Word splitting is wanted: S3PROXY_JAVA_OPTS holds JVM flags.
# shellcheck disable=SC2086
exec java ${S3PROXY_JAVA_OPTS:-} -jar /opt/s3proxy/s3proxy.jar --properties /tmp/s3proxy.properties

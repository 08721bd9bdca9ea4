package dev.snapshots.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.SocketException;
import java.net.URI;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProviderChain;
import software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider;
import software.amazon.awssdk.auth.credentials.ProfileCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.auth.credentials.SystemPropertyCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.retries.StandardRetryStrategy;
import software.amazon.awssdk.retries.api.BackoffStrategy;
import software.amazon.awssdk.retries.api.RetryStrategy;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.model.CompletedMultipartUpload;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;

/**
 * S3 (or any S3-compatible server with conditional writes) through the AWS SDK v2.
 *
 * <p>Staging is a multipart upload that is created and filled but not completed; promoting is
 * {@code CompleteMultipartUpload} with {@code If-None-Match: *}. Content is uploaded as a single
 * part of any size (S3 allows one part below the 5 MiB minimum), so a committable carries one
 * ETag. The SDK's own retries are off: the sink's committer retries with backoff and counts them.
 */
public final class S3ObjectStore implements ObjectStore {
    private static final String CONTENT_TYPE = "application/octet-stream";

    private final S3Client s3;
    private final String bucket;
    private final String prefix;
    private final String description;

    S3ObjectStore(StoreSpec spec) {
        S3ClientBuilder builder = S3Client.builder()
                .httpClientBuilder(ApacheHttpClient.builder()
                        .connectionTimeout(Duration.ofSeconds(5))
                        .socketTimeout(Duration.ofSeconds(30))
                        .maxConnections(16))
                .overrideConfiguration(o -> o.retryStrategy(resendOnStaleConnection())
                        .apiCallAttemptTimeout(Duration.ofSeconds(60)))
                // Checksums only where S3 requires them: S3-compatible servers reject trailing checksums.
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
        spec.endpoint().ifPresent(e -> builder.endpointOverride(URI.create(e)).forcePathStyle(true));
        if (spec.endpoint().map(S3ObjectStore::isLoopback).orElse(false)) {
            builder.credentialsProvider(localCredentials());
        }
        spec.region()
                .or(() -> spec.endpoint().map(e -> "us-east-1"))
                .ifPresent(r -> builder.region(Region.of(r)));
        this.s3 = builder.build();
        this.bucket = spec.bucket();
        this.prefix = spec.prefix();
        this.description = spec.toString();
    }

    /**
     * For an S3 on this machine (S3Proxy, MinIO), which may run without authorization while the
     * SDK still signs every request: configured credentials if there are any, else placeholders.
     * Container and instance credentials are skipped, since they cannot be meant for a local server.
     */
    private static AwsCredentialsProvider localCredentials() {
        return AwsCredentialsProviderChain.of(SystemPropertyCredentialsProvider.create(),
                EnvironmentVariableCredentialsProvider.create(), ProfileCredentialsProvider.create(),
                StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")));
    }

    private static boolean isLoopback(String endpoint) {
        String host = URI.create(endpoint).getHost();
        try {
            return host != null && InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /**
     * The SDK retries once, at once, and only when a pooled connection turns out to be closed
     * (a server may close it after answering a conditional write early with 412). Nothing reached
     * the server then. Every other failure goes to the caller, whose backoff counts it.
     */
    private static RetryStrategy resendOnStaleConnection() {
        return StandardRetryStrategy.builder()
                .maxAttempts(2)
                .backoffStrategy(BackoffStrategy.retryImmediately())
                .circuitBreakerEnabled(false)
                .retryOnException(e -> e instanceof SdkClientException && e.getCause() instanceof SocketException)
                .build();
    }

    @Override
    public StagedObject stage(String key, byte[] content, Map<String, String> metadata) throws IOException {
        String uploadId = call("stage " + key, () -> s3.createMultipartUpload(r -> r.bucket(bucket)
                        .key(prefix + key)
                        .contentType(CONTENT_TYPE)
                        .metadata(metadata))
                .uploadId());
        try {
            String etag = call("upload part of " + key, () -> s3.uploadPart(
                            r -> r.bucket(bucket).key(prefix + key).uploadId(uploadId).partNumber(1),
                            RequestBody.fromBytes(content))
                    .eTag());
            return new StagedObject(key, uploadId, List.of(etag));
        } catch (IOException e) {
            abortQuietly(key, uploadId);
            throw e;
        }
    }

    @Override
    public boolean promote(StagedObject staged) throws IOException {
        List<CompletedPart> parts = new ArrayList<>();
        for (int i = 0; i < staged.partETags().size(); i++) {
            parts.add(CompletedPart.builder().partNumber(i + 1).eTag(staged.partETags().get(i)).build());
        }
        return created("promote " + staged.key(), () -> s3.completeMultipartUpload(r -> r.bucket(bucket)
                .key(prefix + staged.key())
                .uploadId(staged.handle())
                .ifNoneMatch("*")
                .multipartUpload(CompletedMultipartUpload.builder().parts(parts).build())));
    }

    @Override
    public void abort(StagedObject staged) throws IOException {
        try {
            call("abort " + staged.key(), () -> s3.abortMultipartUpload(
                    r -> r.bucket(bucket).key(prefix + staged.key()).uploadId(staged.handle())));
        } catch (StoreException e) {
            if (e.kind() != StoreException.Kind.STAGED_GONE) {
                throw e;
            }
        }
    }

    private void abortQuietly(String key, String uploadId) {
        try {
            abort(new StagedObject(key, uploadId, List.of()));
        } catch (IOException | RuntimeException ignored) {
            // The bucket's lifecycle rule removes what this could not.
        }
    }

    @Override
    public boolean putIfAbsent(String key, byte[] content, Map<String, String> metadata) throws IOException {
        return created("put " + key, () -> s3.putObject(
                r -> r.bucket(bucket).key(prefix + key).contentType(CONTENT_TYPE).metadata(metadata).ifNoneMatch("*"),
                RequestBody.fromBytes(content)));
    }

    @Override
    public boolean compareAndSwap(String key, byte[] content, Optional<String> expectedVersion) throws IOException {
        return created("swap " + key, () -> s3.putObject(
                r -> {
                    r.bucket(bucket).key(prefix + key).contentType("application/json");
                    expectedVersion.ifPresentOrElse(r::ifMatch, () -> r.ifNoneMatch("*"));
                },
                RequestBody.fromBytes(content)));
    }

    @Override
    public Optional<ObjectInfo> head(String key) throws IOException {
        try {
            HeadObjectResponse h = call("head " + key, () -> s3.headObject(r -> r.bucket(bucket).key(prefix + key)));
            return Optional.of(new ObjectInfo(key, h.contentLength(), h.eTag(), h.metadata()));
        } catch (StoreException e) {
            if (e.getCause() instanceof S3Exception && ((S3Exception) e.getCause()).statusCode() == 404) {
                return Optional.empty();
            }
            throw e;
        }
    }

    @Override
    public void delete(String key) throws IOException {
        call("delete " + key, () -> s3.deleteObject(r -> r.bucket(bucket).key(prefix + key)));
    }

    @Override
    public Optional<VersionedContent> get(String key) throws IOException {
        try {
            ResponseBytes<GetObjectResponse> bytes =
                    call("get " + key, () -> s3.getObjectAsBytes(r -> r.bucket(bucket).key(prefix + key)));
            return Optional.of(new VersionedContent(bytes.asByteArray(), bytes.response().eTag()));
        } catch (StoreException e) {
            if (e.getCause() instanceof S3Exception && ((S3Exception) e.getCause()).statusCode() == 404) {
                return Optional.empty();
            }
            throw e;
        }
    }

    @Override
    public void list(String keyPrefix, Consumer<ObjectInfo> consumer) throws IOException {
        ListObjectsV2Request request = ListObjectsV2Request.builder().bucket(bucket).prefix(prefix + keyPrefix).build();
        call("list " + keyPrefix, () -> {
            s3.listObjectsV2Paginator(request).contents().forEach(o -> consumer.accept(
                    new ObjectInfo(o.key().substring(prefix.length()), o.size(), o.eTag(), Map.of())));
            return null;
        });
    }

    @Override
    public void listStaged(String keyPrefix, Consumer<StagedInfo> consumer) throws IOException {
        call("list uploads under " + keyPrefix, () -> {
            s3.listMultipartUploadsPaginator(r -> r.bucket(bucket).prefix(prefix + keyPrefix)).uploads().forEach(u ->
                    consumer.accept(new StagedInfo(u.key().substring(prefix.length()), u.uploadId(), u.initiated())));
            return null;
        });
    }

    @Override
    public String describe() {
        return description;
    }

    @Override
    public void close() {
        s3.close();
    }

    /** Runs a conditional write: true if it created, false on 412 Precondition Failed. */
    private boolean created(String what, SdkCall<?> write) throws IOException {
        try {
            call(what, write);
            return true;
        } catch (StoreException e) {
            if (e.getCause() instanceof S3Exception && ((S3Exception) e.getCause()).statusCode() == 412) {
                return false;
            }
            throw e;
        }
    }

    private <T> T call(String what, SdkCall<T> call) throws StoreException {
        try {
            return call.run();
        } catch (S3Exception e) {
            throw new StoreException(classify(e), what + " on " + description + " failed: " + e.getMessage(), e);
        } catch (SdkClientException | UncheckedIOException e) {
            // No (complete) response: connection refused or dropped, or a timeout. Worth another try.
            throw new StoreException(StoreException.Kind.TRANSIENT, what + " on " + description + " failed: " + e.getMessage(), e);
        } catch (SdkException e) {
            throw new StoreException(StoreException.Kind.PERMANENT, what + " on " + description + " failed: " + e.getMessage(), e);
        }
    }

    static StoreException.Kind classify(S3Exception e) {
        int status = e.statusCode();
        String code = e.awsErrorDetails() == null ? "" : String.valueOf(e.awsErrorDetails().errorCode());
        if (status == 409) {
            return StoreException.Kind.CONFLICT;
        }
        if ("NoSuchUpload".equals(code)) {
            return StoreException.Kind.STAGED_GONE;
        }
        if (status == 429 || status >= 500 || e.isThrottlingException()) {
            return StoreException.Kind.TRANSIENT;
        }
        return StoreException.Kind.PERMANENT;
    }

    @FunctionalInterface
    private interface SdkCall<T> {
        T run();
    }
}

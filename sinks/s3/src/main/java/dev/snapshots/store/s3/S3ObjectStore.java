package dev.snapshots.store.s3;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.store.Chunks;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StagedObject;
import dev.snapshots.store.StoreException;
import dev.snapshots.store.StoreSpec;
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
import java.util.Set;
import java.util.function.Consumer;
import org.apache.flink.annotation.PublicEvolving;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProviderChain;
import software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider;
import software.amazon.awssdk.auth.credentials.ProfileCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.auth.credentials.SystemPropertyCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.retries.StandardRetryStrategy;
import software.amazon.awssdk.retries.api.AcquireInitialTokenRequest;
import software.amazon.awssdk.retries.api.BackoffStrategy;
import software.amazon.awssdk.retries.api.RefreshRetryTokenRequest;
import software.amazon.awssdk.retries.api.RetryStrategy;
import software.amazon.awssdk.retries.api.RetryToken;
import software.amazon.awssdk.retries.api.TokenAcquisitionFailedException;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.model.CompletedMultipartUpload;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * S3 (or any S3-compatible server with conditional writes) through the AWS SDK v2.
 *
 * <p>Staging keeps the content as a plain object under {@code _staging/} and starts a multipart
 * upload from it that is not completed; promoting is {@code CompleteMultipartUpload} with {@code
 * If-None-Match: *}, and an upload that vanished is started again from the copy. Content is one
 * part of any size (S3 allows one part below the 5 MiB minimum), so a committable carries one ETag.
 * The SDK tries a request twice at most, at once; what still fails goes to the sink, which retries
 * with backoff and counts it.
 */
@PublicEvolving
public final class S3ObjectStore implements ObjectStore {
    private static final Logger LOG = LoggerFactory.getLogger(S3ObjectStore.class);
    private static final String CONTENT_TYPE = "application/octet-stream";

    private final S3Client s3;
    private final String bucket;
    private final String prefix;
    private final String description;

    S3ObjectStore(StoreSpec spec) {
        S3ClientBuilder builder =
                S3Client.builder()
                        .httpClientBuilder(
                                ApacheHttpClient.builder()
                                        .connectionTimeout(Duration.ofSeconds(5))
                                        .socketTimeout(Duration.ofSeconds(30))
                                        .maxConnections(16))
                        .overrideConfiguration(
                                o ->
                                        o.retryStrategy(resendOnStaleConnection())
                                                .apiCallAttemptTimeout(Duration.ofSeconds(60)))
                        // Checksums only where S3 requires them: S3-compatible servers reject
                        // trailing checksums.
                        .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                        .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
        spec.endpoint()
                .ifPresent(e -> builder.endpointOverride(URI.create(e)).forcePathStyle(true));
        if (spec.endpoint().map(S3ObjectStore::isLoopback).orElse(false)) {
            builder.credentialsProvider(localCredentials());
        }
        spec.region()
                .or(() -> spec.endpoint().map(e -> "us-east-1"))
                .ifPresent(r -> builder.region(Region.of(r)));
        this.s3 = builder.build();
        this.bucket = spec.uri().getHost();
        String path = Optional.ofNullable(spec.uri().getPath()).orElse("").replaceAll("^/+", "");
        this.prefix =
                path.isEmpty() || path.endsWith("/")
                        ? path
                        : path + "/"; // the key prefix, empty or ending in '/'

        this.description = spec.toString();
    }

    /**
     * For an S3 on this machine (S3Proxy, MinIO), which may run without authorization while the SDK
     * still signs every request: configured credentials if there are any, else placeholders.
     * Container and instance credentials are skipped, since they cannot be meant for a local
     * server.
     */
    private static AwsCredentialsProvider localCredentials() {
        return AwsCredentialsProviderChain.of(
                SystemPropertyCredentialsProvider.create(),
                EnvironmentVariableCredentialsProvider.create(),
                ProfileCredentialsProvider.create(),
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
     * The SDK retries once, at once, when a pooled connection turns out to be closed (a server may
     * close it after answering a conditional write early with 412; nothing reached the server
     * then). The client adds its default conditions to any strategy, so it also retries once, at
     * once and uncounted, what the SDK deems retryable: throttling, 500/502/503/504,
     * RequestTimeout, InternalError (in a 200 too), clock skew, I/O errors. What fails both
     * attempts, or is not retryable for the SDK, goes to the caller, whose backoff counts it.
     */
    private static RetryStrategy resendOnStaleConnection() {
        return StandardRetryStrategy.builder()
                .maxAttempts(2)
                .backoffStrategy(BackoffStrategy.retryImmediately())
                .circuitBreakerEnabled(false)
                .retryOnException(
                        e ->
                                e instanceof SdkClientException
                                        && e.getCause() instanceof SocketException)
                .build();
    }

    /**
     * Keeps a durable copy under {@code _staging/} (one PUT, with the metadata), then starts the
     * upload from it server-side: the content crosses the network once. The upload makes the commit
     * one request; the copy makes the part publishable as long as the copy is kept.
     */
    @Override
    public StagedObject stage(String key, Chunks content, Map<String, String> metadata)
            throws IOException {
        String copy = ObjectKeys.stagingKey(key);
        call(
                "stage " + key,
                () ->
                        s3.putObject(
                                r ->
                                        r.bucket(bucket)
                                                .key(prefix + copy)
                                                .contentType(CONTENT_TYPE)
                                                .metadata(metadata),
                                // Read from the writer's buffer: fromBytes would copy the part.
                                RequestBody.fromContentProvider(
                                        content::open, content.length(), CONTENT_TYPE)));
        try {
            return upload(key, copy, metadata);
        } catch (IOException | RuntimeException e) {
            // The caller stages again under a new name: this copy would only wait for the
            // retention.
            deleteQuietly(copy);
            throw e;
        }
    }

    /** A one-part upload of {@code copy}'s content to {@code key}, not completed. */
    private StagedObject upload(String key, String copy, Map<String, String> metadata)
            throws IOException {
        String uploadId =
                call(
                        "start upload of " + key,
                        () ->
                                s3.createMultipartUpload(
                                                r ->
                                                        r.bucket(bucket)
                                                                .key(prefix + key)
                                                                .contentType(CONTENT_TYPE)
                                                                .metadata(metadata))
                                        .uploadId());
        try {
            String etag =
                    call(
                            "copy " + copy + " into the upload of " + key,
                            () ->
                                    s3.uploadPartCopy(
                                                    r ->
                                                            r.sourceBucket(bucket)
                                                                    .sourceKey(prefix + copy)
                                                                    .destinationBucket(bucket)
                                                                    .destinationKey(prefix + key)
                                                                    .uploadId(uploadId)
                                                                    .partNumber(1))
                                            .copyPartResult()
                                            .eTag());
            return new StagedObject(key, uploadId, List.of(etag), copy);
        } catch (IOException e) {
            abortUpload(key, uploadId);
            throw e;
        }
    }

    /**
     * Completes the upload with {@code If-None-Match: *}. An upload that is gone (aborted by a
     * lifecycle rule, or dropped by S3 after a 409 on its completion) is started again from the
     * durable copy; after a 409 itself the caller retries, and then finds the upload gone.
     */
    @Override
    public boolean promote(StagedObject staged) throws IOException {
        boolean created;
        try {
            created = complete(staged);
        } catch (StoreException e) {
            if (e.kind() != StoreException.Kind.STAGED_GONE || staged.copy().isEmpty()) {
                throw e;
            }
            Map<String, String> metadata =
                    head(staged.copy())
                            .orElseThrow(
                                    () ->
                                            new StoreException(
                                                    StoreException.Kind.STAGED_GONE,
                                                    "the upload for "
                                                            + staged.key()
                                                            + " and its staged copy "
                                                            + staged.copy()
                                                            + " are both gone",
                                                    e))
                            .metadata();
            LOG.info(
                    "The upload for {} is gone; publishing from its staged copy {}",
                    staged.key(),
                    staged.copy());
            StagedObject again = upload(staged.key(), staged.copy(), metadata);
            try {
                created = complete(again);
            } catch (IOException | RuntimeException failed) {
                // The retry makes an upload of its own from the copy: this one would be an
                // orphan until the lifecycle rule. Aborting one that did complete is harmless.
                abortUpload(again.key(), again.handle());
                throw failed;
            }
            if (!created) {
                abortUpload(again.key(), again.handle());
            }
        }
        if (created && !staged.copy().isEmpty()) {
            deleteQuietly(staged.copy());
        }
        return created;
    }

    private boolean complete(StagedObject staged) throws IOException {
        List<CompletedPart> parts = new ArrayList<>();
        for (int i = 0; i < staged.partETags().size(); i++) {
            parts.add(
                    CompletedPart.builder()
                            .partNumber(i + 1)
                            .eTag(staged.partETags().get(i))
                            .build());
        }
        return created(
                "promote " + staged.key(),
                () ->
                        s3.completeMultipartUpload(
                                r ->
                                        r.bucket(bucket)
                                                .key(prefix + staged.key())
                                                .uploadId(staged.handle())
                                                .ifNoneMatch("*")
                                                .multipartUpload(
                                                        CompletedMultipartUpload.builder()
                                                                .parts(parts)
                                                                .build())));
    }

    @Override
    public void abort(StagedObject staged) throws IOException {
        try {
            call(
                    "abort " + staged.key(),
                    () ->
                            s3.abortMultipartUpload(
                                    r ->
                                            r.bucket(bucket)
                                                    .key(prefix + staged.key())
                                                    .uploadId(staged.handle())));
        } catch (StoreException e) {
            if (e.kind() != StoreException.Kind.STAGED_GONE) {
                throw e;
            }
        }
        if (!staged.copy().isEmpty()) {
            delete(staged.copy());
        }
    }

    private void abortUpload(String key, String uploadId) {
        try {
            abort(new StagedObject(key, uploadId, List.of()));
        } catch (IOException | RuntimeException ignored) {
            // The bucket's lifecycle rule removes what this could not.
        }
    }

    /**
     * A staged copy no longer needed (its part published, or its staging failed); one left behind
     * expires with the staging retention.
     */
    private void deleteQuietly(String copy) {
        try {
            delete(copy);
        } catch (IOException e) {
            LOG.warn(
                    "Could not delete the staged copy {}; the bucket's staging retention removes it: {}",
                    copy,
                    e.getMessage());
        }
    }

    @Override
    public boolean putIfAbsent(String key, byte[] content, Map<String, String> metadata)
            throws IOException {
        return created(
                "put " + key,
                () ->
                        s3.putObject(
                                r ->
                                        r.bucket(bucket)
                                                .key(prefix + key)
                                                .contentType(CONTENT_TYPE)
                                                .metadata(metadata)
                                                .ifNoneMatch("*"),
                                RequestBody.fromBytes(content)));
    }

    @Override
    public Optional<String> compareAndSwap(
            String key, byte[] content, Optional<String> expectedVersion) throws IOException {
        return accepted(
                        "swap " + key,
                        () ->
                                s3.putObject(
                                        r -> {
                                            r.bucket(bucket)
                                                    .key(prefix + key)
                                                    .contentType("application/json");
                                            expectedVersion.ifPresentOrElse(
                                                    r::ifMatch, () -> r.ifNoneMatch("*"));
                                        },
                                        RequestBody.fromBytes(content)))
                .map(PutObjectResponse::eTag);
    }

    @Override
    public Optional<ObjectInfo> head(String key) throws IOException {
        try {
            HeadObjectResponse h =
                    call(
                            "head " + key,
                            () -> s3.headObject(r -> r.bucket(bucket).key(prefix + key)));
            return Optional.of(new ObjectInfo(key, h.contentLength(), h.eTag(), h.metadata()));
        } catch (StoreException e) {
            if (e.getCause() instanceof S3Exception
                    && ((S3Exception) e.getCause()).statusCode() == 404) {
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
                    call(
                            "get " + key,
                            () -> s3.getObjectAsBytes(r -> r.bucket(bucket).key(prefix + key)));
            return Optional.of(new VersionedContent(bytes.asByteArray(), bytes.response().eTag()));
        } catch (StoreException e) {
            if (e.getCause() instanceof S3Exception
                    && ((S3Exception) e.getCause()).statusCode() == 404) {
                return Optional.empty();
            }
            throw e;
        }
    }

    @Override
    public void list(String keyPrefix, Consumer<ObjectInfo> consumer) throws IOException {
        ListObjectsV2Request request =
                ListObjectsV2Request.builder().bucket(bucket).prefix(prefix + keyPrefix).build();
        call(
                "list " + keyPrefix,
                () -> {
                    s3.listObjectsV2Paginator(request)
                            .contents()
                            .forEach(
                                    o ->
                                            consumer.accept(
                                                    new ObjectInfo(
                                                            o.key().substring(prefix.length()),
                                                            o.size(),
                                                            o.eTag(),
                                                            Map.of())));
                    return null;
                });
    }

    @Override
    public void listDirectories(String keyPrefix, Consumer<String> consumer) throws IOException {
        call(
                "list directories under " + keyPrefix,
                () -> {
                    s3.listObjectsV2Paginator(
                                    r -> r.bucket(bucket).prefix(prefix + keyPrefix).delimiter("/"))
                            .commonPrefixes()
                            .forEach(p -> consumer.accept(p.prefix().substring(prefix.length())));
                    return null;
                });
    }

    /** Uploads not completed, and the staged copies of parts not yet published. */
    @Override
    public void listStaged(String keyPrefix, Consumer<StagedInfo> consumer) throws IOException {
        listUploads(keyPrefix, consumer);
        call(
                "list staged copies under " + keyPrefix,
                () -> {
                    s3.listObjectsV2Paginator(
                                    r ->
                                            r.bucket(bucket)
                                                    .prefix(
                                                            prefix
                                                                    + ObjectKeys.STAGING_PREFIX
                                                                    + keyPrefix))
                            .contents()
                            .forEach(
                                    o -> {
                                        String copy = o.key().substring(prefix.length());
                                        consumer.accept(
                                                new StagedInfo(
                                                        ObjectKeys.stagedPart(copy).orElse(copy),
                                                        copy,
                                                        o.lastModified()));
                                    });
                    return null;
                });
    }

    private void listUploads(String keyPrefix, Consumer<StagedInfo> consumer) throws IOException {
        call(
                "list uploads under " + keyPrefix,
                () -> {
                    s3.listMultipartUploadsPaginator(
                                    r -> r.bucket(bucket).prefix(prefix + keyPrefix))
                            .uploads()
                            .forEach(
                                    u ->
                                            consumer.accept(
                                                    new StagedInfo(
                                                            u.key().substring(prefix.length()),
                                                            u.uploadId(),
                                                            u.initiated())));
                    return null;
                });
    }

    /**
     * What a bucket's abort-incomplete-multipart-uploads rule does once its age has passed: aborts
     * every upload not completed. The staged copies are plain objects and stay. For the tests and
     * {@code snapshots chaos}, which provoke it during an outage.
     *
     * @return how many uploads it aborted
     */
    public int abortIncompleteUploads() throws IOException {
        List<StagedInfo> uploads = new ArrayList<>();
        listUploads("", uploads::add);
        for (StagedInfo u : uploads) {
            abort(new StagedObject(u.key(), u.handle(), List.of()));
        }
        return uploads.size();
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
        return accepted(what, write).isPresent();
    }

    /** A conditional write's response; empty if its condition failed (412). */
    private <T> Optional<T> accepted(String what, SdkCall<T> write) throws IOException {
        try {
            return Optional.of(call(what, write));
        } catch (StoreException e) {
            if (e.getCause() instanceof S3Exception
                    && ((S3Exception) e.getCause()).statusCode() == 412) {
                return Optional.empty();
            }
            throw e;
        }
    }

    private <T> T call(String what, SdkCall<T> call) throws StoreException {
        try {
            return call.run();
        } catch (S3Exception e) {
            throw new StoreException(
                    classify(e), what + " on " + description + " failed: " + e.getMessage(), e);
        } catch (SdkClientException | UncheckedIOException e) {
            // No (complete) response: connection refused or dropped, or a timeout. Worth another
            // try.
            throw new StoreException(
                    StoreException.Kind.TRANSIENT,
                    what + " on " + description + " failed: " + e.getMessage(),
                    e);
        } catch (SdkException e) {
            throw new StoreException(
                    StoreException.Kind.PERMANENT,
                    what + " on " + description + " failed: " + e.getMessage(),
                    e);
        }
    }

    /**
     * By the error code as well as the status: S3 can fail a CompleteMultipartUpload or a copy
     * after it answered 200 OK, and the SDK then throws with status 200 and the code from the body.
     */
    static StoreException.Kind classify(S3Exception e) {
        int status = e.statusCode();
        String code =
                e.awsErrorDetails() == null ? "" : String.valueOf(e.awsErrorDetails().errorCode());
        if (status == 409) {
            return StoreException.Kind.CONFLICT;
        }
        if ("NoSuchUpload".equals(code)) {
            return StoreException.Kind.STAGED_GONE;
        }
        if (status == 429
                || status >= 500
                || RETRIED_THOUGH_AWS_DOES_NOT.contains(code)
                || awsRetries(e)) {
            return StoreException.Kind.TRANSIENT;
        }
        return StoreException.Kind.PERMANENT;
    }

    /**
     * Worth another attempt, though the SDK's default strategy gives up on them: an expired session
     * token (the credentials provider refreshes it, so the next attempt is signed anew), and
     * ServiceUnavailable inside a 200 answer, where the status cannot say 503.
     */
    private static final Set<String> RETRIED_THOUGH_AWS_DOES_NOT =
            Set.of(
                    "ExpiredToken",
                    "ExpiredTokenException",
                    "TokenRefreshRequired",
                    "ServiceUnavailable");

    /**
     * The SDK's default retry strategy, only asked, never used to retry: it knows the throttling
     * codes, clock skew (RequestTimeTooSkewed; the client corrects its offset from the answer's
     * Date) and the retryable codes (RequestTimeout, InternalError) whatever the status, and its
     * lists of them are internal to the SDK.
     */
    private static final RetryStrategy AWS_DEFAULTS =
            AwsRetryStrategy.standardRetryStrategy().toBuilder()
                    .circuitBreakerEnabled(false)
                    .backoffStrategy(BackoffStrategy.retryImmediately())
                    .build();

    private static boolean awsRetries(S3Exception e) {
        if (e.awsErrorDetails() == null) {
            return false; // the SDK's conditions read the code from the details
        }
        RetryToken first =
                AWS_DEFAULTS
                        .acquireInitialToken(AcquireInitialTokenRequest.create("classify"))
                        .token();
        try {
            AWS_DEFAULTS.refreshRetryToken(
                    RefreshRetryTokenRequest.builder().token(first).failure(e).build());
            return true;
        } catch (TokenAcquisitionFailedException notRetryable) {
            return false;
        }
    }

    @FunctionalInterface
    private interface SdkCall<T> {
        T run();
    }
}

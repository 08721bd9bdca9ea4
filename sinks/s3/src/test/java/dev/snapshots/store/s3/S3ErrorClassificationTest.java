package dev.snapshots.store.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import dev.snapshots.store.StoreException.Kind;
import dev.snapshots.testkit.FaultProxy;
import dev.snapshots.testkit.FaultProxy.Fault;
import java.net.URI;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * What the S3 store makes of each error S3 answers: retried by the committer (TRANSIENT, CONFLICT),
 * the staged upload gone, or a failure that fails the job over (PERMANENT).
 */
class S3ErrorClassificationTest {

    @ParameterizedTest(name = "{0} {1} is {2}")
    @CsvSource(
            nullValues = "none",
            value = {
                "503, SlowDown, TRANSIENT",
                "500, InternalError, TRANSIENT",
                "429, TooManyRequests, TRANSIENT",
                "400, RequestTimeout, TRANSIENT",
                "403, RequestTimeTooSkewed, TRANSIENT",
                "400, ExpiredToken, TRANSIENT",
                "400, ExpiredTokenException, TRANSIENT",
                "400, TokenRefreshRequired, TRANSIENT",
                // Inside a 200 answer to CompleteMultipartUpload or a copy.
                "200, InternalError, TRANSIENT",
                "200, SlowDown, TRANSIENT",
                "200, ServiceUnavailable, TRANSIENT",
                "409, ConditionalRequestConflict, CONFLICT",
                "404, NoSuchUpload, STAGED_GONE",
                "403, AccessDenied, PERMANENT",
                "403, SignatureDoesNotMatch, PERMANENT",
                "404, NoSuchBucket, PERMANENT",
                "400, InvalidArgument, PERMANENT",
                "400, InvalidPart, PERMANENT",
                // A HEAD's answer has no body, so no code to tell a denial from an expired token.
                "403, none, PERMANENT",
            })
    void anErrorIsClassifiedByItsStatusAndCode(int status, String code, Kind expected) {
        S3Exception e =
                (S3Exception)
                        S3Exception.builder()
                                .statusCode(status)
                                .awsErrorDetails(AwsErrorDetails.builder().errorCode(code).build())
                                .build();

        assertThat(S3ObjectStore.classify(e)).as("%d %s", status, code).isEqualTo(expected);
    }

    @ParameterizedTest(name = "{0} is {1}")
    @CsvSource({"403, PERMANENT", "503, TRANSIENT"})
    void anErrorWithoutDetailsIsClassifiedByItsStatus(int status, Kind expected) {
        S3Exception e = (S3Exception) S3Exception.builder().statusCode(status).build();

        assertThat(S3ObjectStore.classify(e)).isEqualTo(expected);
    }

    /**
     * S3 fails these after it has sent 200 OK, with an Error document as the body; the SDK throws
     * with status 200 and the document's code. Answered by the fault proxy, which forwards nothing
     * here, so no server stands behind it.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = Fault.class,
            names = {"COMPLETE_INTERNAL_200", "COPY_INTERNAL_200"})
    void anInternalErrorInsideA200AnswerIsRetried(Fault fault) throws Exception {
        try (FaultProxy proxy = new FaultProxy("http://127.0.0.1:9", 1);
                S3Client s3 = client(proxy)) {
            proxy.failNext(fault, 1);

            assertThatExceptionOfType(S3Exception.class)
                    .isThrownBy(() -> call(s3, fault))
                    .satisfies(
                            e -> {
                                assertThat(e.statusCode()).isEqualTo(200);
                                assertThat(e.awsErrorDetails().errorCode())
                                        .isEqualTo("InternalError");
                                assertThat(S3ObjectStore.classify(e)).isEqualTo(Kind.TRANSIENT);
                            });
            assertThat(proxy.injected(fault)).isEqualTo(1);
        }
    }

    /** One attempt: the one answer the proxy injects is what the SDK turns into an exception. */
    private static S3Client client(FaultProxy proxy) {
        return S3Client.builder()
                .endpointOverride(URI.create(proxy.endpoint()))
                .forcePathStyle(true)
                .region(Region.US_EAST_1)
                .credentialsProvider(
                        StaticCredentialsProvider.create(
                                AwsBasicCredentials.create("local", "local")))
                .overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.doNotRetry()))
                .build();
    }

    private static void call(S3Client s3, Fault fault) {
        if (fault == Fault.COMPLETE_INTERNAL_200) {
            s3.completeMultipartUpload(
                    r ->
                            r.bucket("bucket")
                                    .key("part")
                                    .uploadId("upload")
                                    .multipartUpload(
                                            u ->
                                                    u.parts(
                                                            CompletedPart.builder()
                                                                    .partNumber(1)
                                                                    .eTag("etag")
                                                                    .build())));
        } else {
            s3.uploadPartCopy(
                    r ->
                            r.sourceBucket("bucket")
                                    .sourceKey("staged")
                                    .destinationBucket("bucket")
                                    .destinationKey("part")
                                    .uploadId("upload")
                                    .partNumber(1));
        }
    }
}

package dev.snapshots.sink;

import dev.snapshots.key.PartMetadata;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Who computed a part: the Flink job id, the host and, on ECS, the task ARN. It goes into object
 * metadata and divergence evidence so an operator can tell two writers apart; it never enters a key
 * or the file content.
 */
final class Provenance {
    private static final Pattern TASK_ARN = Pattern.compile("\"TaskARN\"\\s*:\\s*\"([^\"]+)\"");
    private static volatile Map<String, String> process;

    private Provenance() {}

    static Map<String, String> of(String jobId) {
        Map<String, String> p = process();
        return Map.of(
                PartMetadata.WRITER_JOB, jobId,
                PartMetadata.WRITER_HOST, p.get(PartMetadata.WRITER_HOST),
                PartMetadata.WRITER_TASK, p.get(PartMetadata.WRITER_TASK));
    }

    /** Resolved once per JVM: the ECS metadata endpoint is a network call. */
    private static Map<String, String> process() {
        if (process == null) {
            synchronized (Provenance.class) {
                if (process == null) {
                    process =
                            Map.of(
                                    PartMetadata.WRITER_HOST, host(),
                                    PartMetadata.WRITER_TASK,
                                            ecsTaskArn(
                                                            System.getenv(
                                                                    "ECS_CONTAINER_METADATA_URI_V4"))
                                                    .orElse("-"));
                }
            }
        }
        return process;
    }

    private static String host() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            return Optional.ofNullable(System.getenv("HOSTNAME")).orElse("unknown");
        }
    }

    static Optional<String> ecsTaskArn(String metadataUri) {
        if (metadataUri == null || metadataUri.isEmpty()) {
            return Optional.empty();
        }
        try {
            HttpResponse<String> response =
                    HttpClient.newBuilder()
                            .connectTimeout(Duration.ofSeconds(1))
                            .build()
                            .send(
                                    HttpRequest.newBuilder(URI.create(metadataUri + "/task"))
                                            .timeout(Duration.ofSeconds(2))
                                            .build(),
                                    HttpResponse.BodyHandlers.ofString());
            Matcher m = TASK_ARN.matcher(response.body());
            return m.find() ? Optional.of(m.group(1)) : Optional.empty();
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return Optional.empty(); // provenance is informational: never fail a write over it
        }
    }
}

package dev.snapshots.testkit;

import dev.snapshots.store.StoreSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import org.apache.flink.annotation.PublicEvolving;

/** The stores and staging modes every sink scenario runs against. */
@PublicEvolving
public enum StoreKind {
    /** S3 (S3Proxy over HTTP), small parts inline: one conditional PutObject per part. */
    S3_INLINE(Integer.MAX_VALUE),
    /** S3, every part staged as a multipart upload and completed with If-None-Match. */
    S3_MULTIPART(0),
    /** The local filesystem, every part staged as a temp file and promoted by hard link. */
    FILESYSTEM(0);

    private final int inlineThresholdBytes;

    StoreKind(int inlineThresholdBytes) {
        this.inlineThresholdBytes = inlineThresholdBytes;
    }

    public int inlineThresholdBytes() {
        return inlineThresholdBytes;
    }

    public boolean isS3() {
        return this != FILESYSTEM;
    }

    /** A new, empty store. */
    public StoreSpec fresh() {
        if (isS3()) {
            S3ProxyServer s3 = S3ProxyServer.get();
            return StoreSpec.parse("s3://" + s3.createBucket("snap") + "/out")
                    .withEndpoint(s3.endpoint());
        }
        try {
            return StoreSpec.local(Files.createTempDirectory("snapshots-fs"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

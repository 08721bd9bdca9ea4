package dev.snapshots.sink;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;

/**
 * All rows of one bucket of one window: what the sink publishes as one object. A Flink POJO
 * (mutable, no-arg constructor) because it travels between operators; use {@link #typeInfo}.
 */
@PublicEvolving
public class SnapshotPart<T> {
    private long windowStartMillis;
    private int bucket;
    private List<T> rows = new ArrayList<>();

    public SnapshotPart() {}

    public SnapshotPart(long windowStartMillis, int bucket, List<T> rows) {
        this.windowStartMillis = windowStartMillis;
        this.bucket = bucket;
        this.rows = rows;
    }

    /** Flink type information with the row type spelled out, so rows are not handed to Kryo. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static <T> TypeInformation<SnapshotPart<T>> typeInfo(TypeInformation<T> rowType) {
        return (TypeInformation)
                Types.POJO(
                        SnapshotPart.class,
                        Map.of(
                                "windowStartMillis",
                                Types.LONG,
                                "bucket",
                                Types.INT,
                                "rows",
                                Types.LIST(rowType)));
    }

    public long getWindowStartMillis() {
        return windowStartMillis;
    }

    public void setWindowStartMillis(long windowStartMillis) {
        this.windowStartMillis = windowStartMillis;
    }

    public int getBucket() {
        return bucket;
    }

    public void setBucket(int bucket) {
        this.bucket = bucket;
    }

    public List<T> getRows() {
        return rows;
    }

    public void setRows(List<T> rows) {
        this.rows = rows;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof SnapshotPart)) {
            return false;
        }
        SnapshotPart<?> that = (SnapshotPart<?>) o;
        return windowStartMillis == that.windowStartMillis
                && bucket == that.bucket
                && Objects.equals(rows, that.rows);
    }

    @Override
    public int hashCode() {
        return Objects.hash(windowStartMillis, bucket, rows);
    }

    @Override
    public String toString() {
        return "SnapshotPart{window="
                + windowStartMillis
                + ", bucket="
                + bucket
                + ", rows="
                + rows.size()
                + "}";
    }
}

package dev.snapshots.testutils;

import java.util.Objects;

/** A test event: one measurement of one device. A Flink POJO. */
public class Reading {
    public String key;
    public long timestampMillis;
    public long value;

    public Reading() {}

    public Reading(String key, long timestampMillis, long value) {
        this.key = key;
        this.timestampMillis = timestampMillis;
        this.value = value;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Reading
                && key.equals(((Reading) o).key)
                && timestampMillis == ((Reading) o).timestampMillis
                && value == ((Reading) o).value;
    }

    @Override
    public int hashCode() {
        return Objects.hash(key, timestampMillis, value);
    }

    @Override
    public String toString() {
        return key + "@" + timestampMillis + "=" + value;
    }
}

package dev.snapshots.sink;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.testutils.KeyTotal;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/**
 * The relay's state, through Flink's operator test harness: rows held behind a keyBy (a window
 * parallelism that splits buckets) and caught by a savepoint come out where a later job runs the
 * relay chained (a parallelism that keeps buckets whole), at any parallelism, each row once, in the
 * subtask of its key group, when the watermark passes their window and before that watermark.
 */
class WindowRowsRelayTest {
    private static final int MAX_PARALLELISM = 128;
    private static final long MINUTE = 60_000;

    private static final List<KeyTotal> FIRST_WINDOW = new ArrayList<>();

    static {
        for (int k = 0; k < 20; k++) {
            FIRST_WINDOW.add(new KeyTotal("key-" + k, 0, k, 10 * k));
        }
    }

    private static final KeyTotal SECOND_WINDOW = new KeyTotal("key-3", MINUTE, 1, 1);

    @Test
    void heldRowsOfASavepointComeOutOfTheChainedRelayAtTheirWatermarkAfterARescale()
            throws Exception {
        OperatorSubtaskState savepoint;
        try (KeyedOneInputStreamOperatorTestHarness<String, KeyTotal, KeyTotal> holding =
                harness(true, 1, 0)) {
            holding.open();
            for (KeyTotal row : FIRST_WINDOW) {
                holding.processElement(row, MINUTE - 1);
            }
            holding.processElement(SECOND_WINDOW, 2 * MINUTE - 1);
            holding.processWatermark(MINUTE - 2);
            assertThat(holding.extractOutputValues()).as("held before the watermark").isEmpty();
            savepoint = holding.snapshot(1, 1);
        }

        List<KeyTotal> firstWindow = new ArrayList<>();
        List<KeyTotal> secondWindow = new ArrayList<>();
        for (int subtask = 0; subtask < 2; subtask++) {
            try (KeyedOneInputStreamOperatorTestHarness<String, KeyTotal, KeyTotal> chained =
                    harness(false, 2, subtask)) {
                chained.initializeState(
                        AbstractStreamOperatorTestHarness.repartitionOperatorState(
                                savepoint, MAX_PARALLELISM, 1, 2, subtask));
                chained.open();
                chained.processWatermark(MINUTE - 1);
                List<Object> out = new ArrayList<>(chained.getOutput());
                assertThat(out.get(out.size() - 1))
                        .as("the watermark follows the window's rows")
                        .isEqualTo(new Watermark(MINUTE - 1));
                for (Object o : out.subList(0, out.size() - 1)) {
                    KeyTotal row = rowIn(o, MINUTE - 1);
                    assertThat(subtaskOf(row.key)).as(row.key).isEqualTo(subtask);
                    firstWindow.add(row);
                }
                chained.getOutput().clear();

                chained.processWatermark(2 * MINUTE - 1);
                chained.getOutput().stream()
                        .filter(StreamRecord.class::isInstance)
                        .forEach(o -> secondWindow.add(rowIn(o, 2 * MINUTE - 1)));
            }
        }
        assertThat(firstWindow).containsExactlyInAnyOrderElementsOf(FIRST_WINDOW);
        assertThat(secondWindow).containsExactly(SECOND_WINDOW);
    }

    @Test
    void theChainedRelayPassesEachRowOnAsItComes() throws Exception {
        try (KeyedOneInputStreamOperatorTestHarness<String, KeyTotal, KeyTotal> chained =
                harness(false, 1, 0)) {
            chained.open();
            chained.processElement(FIRST_WINDOW.get(0), MINUTE - 1);

            assertThat(chained.extractOutputStreamRecords())
                    .containsExactly(new StreamRecord<>(FIRST_WINDOW.get(0), MINUTE - 1));
        }
    }

    private static KeyTotal rowIn(Object output, long timestamp) {
        @SuppressWarnings("unchecked")
        StreamRecord<KeyTotal> record = (StreamRecord<KeyTotal>) output;
        assertThat(record.getTimestamp()).as("the row's window timestamp").isEqualTo(timestamp);
        return record.getValue();
    }

    private static int subtaskOf(String key) {
        return KeyGroupRangeAssignment.assignKeyToParallelOperator(key, MAX_PARALLELISM, 2);
    }

    private static KeyedOneInputStreamOperatorTestHarness<String, KeyTotal, KeyTotal> harness(
            boolean hold, int parallelism, int subtask) throws Exception {
        return new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(
                        new WindowRowsRelay<>(hold, TypeInformation.of(KeyTotal.class))),
                row -> row.key,
                Types.STRING,
                MAX_PARALLELISM,
                parallelism,
                subtask);
    }
}

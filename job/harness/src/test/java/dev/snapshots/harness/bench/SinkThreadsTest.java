package dev.snapshots.harness.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.harness.bench.BenchRun.Sink;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which threads are a sink's own, by the names Flink and our sink give them. */
class SinkThreadsTest {

    @Test
    void aSinksTasksAndOurPublishersAreItsThreads() {
        assertThat(
                        SinkThreads.counted(
                                Sink.OURS, "snapshots-to-writer -> snapshots: Writer (1/2)#0"))
                .isTrue();
        assertThat(
                        SinkThreads.counted(
                                Sink.OURS,
                                "snapshots-to-committer -> snapshots: Committer (2/2)#0"))
                .isTrue();
        assertThat(SinkThreads.counted(Sink.OURS, "snapshots: Completion pointer (1/1)#0"))
                .isTrue();
        assertThat(SinkThreads.counted(Sink.OURS, "snapshot-publisher")).isTrue();
        assertThat(SinkThreads.counted(Sink.OURS, "completion-pointer-snapshots")).isTrue();
        assertThat(
                        SinkThreads.counted(
                                Sink.FILESINK,
                                "Time Trigger for filesink: Writer -> filesink: Committer (2/2)#0"))
                .as("the timer thread of the sink's task")
                .isTrue();
        assertThat(
                        SinkThreads.counted(
                                Sink.OURS, "System Time Trigger for snapshots: Writer (1/2)#0"))
                .isTrue();
        assertThat(
                        SinkThreads.counted(
                                Sink.OURS,
                                "OutputFlusher for snapshots-to-writer -> snapshots: Writer (1/2)#0"))
                .isTrue();
        assertThat(
                        SinkThreads.counted(
                                Sink.FILESINK, "filesink: Writer -> filesink: Committer (1/2)#0"))
                .isTrue();
    }

    @Test
    void theSourceTheWindowOtherSinksAndTheJvmsOwnThreadsAreNot() {
        assertThat(SinkThreads.counted(Sink.OURS, "Source: generator -> ingest (1/2)#0")).isFalse();
        assertThat(SinkThreads.counted(Sink.OURS, "aggregate (1/2)#0")).isFalse();
        assertThat(SinkThreads.counted(Sink.OURS, "Time Trigger for aggregate (1/2)#0")).isFalse();
        assertThat(SinkThreads.counted(Sink.OURS, "OutputFlusher for aggregate (1/2)#0")).isFalse();
        assertThat(SinkThreads.counted(Sink.OURS, "filesink: Writer (1/2)#0")).isFalse();
        assertThat(SinkThreads.counted(Sink.FILESINK, "snapshot-publisher")).isFalse();
        assertThat(SinkThreads.counted(Sink.FILESINK, "G1 Conc#0")).isFalse();
    }

    @Test
    void aSinkChainedToTheWindowIsRefusedForItsThreadWouldCarryTheWindow() {
        assertThatThrownBy(
                        () ->
                                SinkThreads.counted(
                                        Sink.OURS,
                                        "aggregate -> snapshots-to-writer -> snapshots: Writer"
                                                + " (1/2)#0"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("break the chain before the sink");
    }

    @Test
    void aThreadBornBetweenTwoReadingsCountsWholeAndOneSeenTwiceByItsDifference() {
        SinkThreads.Times before =
                new SinkThreads.Times(Map.of(1L, 100L), Map.of(1L, "snapshot-publisher"));
        SinkThreads.Times after =
                new SinkThreads.Times(
                        Map.of(1L, 250L, 2L, 40L),
                        Map.of(1L, "snapshot-publisher", 2L, "snapshot-publisher"));

        assertThat(after.since(before)).isEqualTo(150 + 40);
    }
}

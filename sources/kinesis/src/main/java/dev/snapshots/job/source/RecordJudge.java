package dev.snapshots.job.source;

import java.io.Serializable;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.SourceOutput;
import org.apache.flink.api.connector.source.SourceReaderContext;

/**
 * What a source makes of one raw record, judged against its split's progress: the job's parsing and
 * its lateness rule, kept out of the sources so that every source applies the same one.
 */
@Internal
public interface RecordJudge<T> extends Serializable {
    /** The rule the judge applies; the sources use it to move an idle split's watermark. */
    LatenessRule rule();

    /**
     * Called once in each reader before its first record: a judge that needs the task (a format's
     * deserializer, generated code) sets itself up here.
     */
    default void open(SourceReaderContext context) throws Exception {}

    /**
     * Parses one record, updates the split's progress and emits what the record becomes, with its
     * timestamp, to the split's output. Never throws on bad input: a bad record is emitted as a
     * dead letter.
     */
    void judge(RawRecord record, SplitProgress progress, SourceOutput<T> out);
}

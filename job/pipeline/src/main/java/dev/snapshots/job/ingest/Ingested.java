package dev.snapshots.job.ingest;

import dev.snapshots.job.DeadLetter;
import org.apache.flink.annotation.Internal;

/**
 * What a source made of one record: an on-time event, or a dead letter. A Flink POJO; one field is
 * set.
 */
@Internal
public class Ingested {
    public Event event;
    public DeadLetter deadLetter;

    public Ingested() {}

    static Ingested of(Event e) {
        Ingested i = new Ingested();
        i.event = e;
        return i;
    }

    static Ingested of(DeadLetter d) {
        Ingested i = new Ingested();
        i.deadLetter = d;
        return i;
    }
}

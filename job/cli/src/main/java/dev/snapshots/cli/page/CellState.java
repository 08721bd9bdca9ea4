package dev.snapshots.cli.page;

import java.util.Locale;
import org.apache.flink.annotation.Internal;

/**
 * What one (window, bucket) of a job version shows on the store page, most pressing first: a cell
 * with several is drawn as the first that applies. Each state has a glyph and a fill of its own, so
 * none is told by colour alone, and a name its label starts with.
 */
@Internal
public enum CellState {
    DIVERGENT(
            "d",
            "≠",
            "divergent",
            "two executions computed different content; the first object stays, evidence under"
                    + " _divergence/"),
    MISSING(
            "m",
            "×",
            "missing",
            "no object, though the window is complete: its manifest lists the part, or the pointer"
                    + " passed it"),
    FINDING(
            "f",
            "!",
            "audit finding",
            "a second object for the part, a bucket beyond B, content that no longer matches its"
                    + " manifest or its own fingerprint, or content that cannot be read"),
    STAGED(
            "s",
            "…",
            "staged, not published",
            "a writer staged the part and nothing published it yet; past --stale-staging it is an"
                    + " audit finding"),
    ACKNOWLEDGED(
            "a",
            "✓",
            "acknowledged",
            "an operator examined the audit's finding here and recorded why it stands"),
    COLLAPSED(
            "c",
            "=",
            "collapsed",
            "published, and computed again by another execution (an overlap, a failover's re-commit)"
                    + " with equal content"),
    PUBLISHED("p", "", "published", "one object, as the manifest lists it"),
    EMPTY(
            "e",
            "",
            "empty",
            "no rows in this bucket: the window is complete and its manifest lists no part for it"),
    PENDING(
            "o",
            "",
            "not yet published",
            "the window is open: the completion pointer has not passed it");

    /** The cell's CSS class: short, since a week at B = 128 draws a quarter of a million cells. */
    public final String css;

    /**
     * Drawn in the cell; published, empty and pending are told apart by their fill: solid, pale,
     * none.
     */
    public final String glyph;

    public final String label;
    public final String meaning;

    CellState(String css, String glyph, String label, String meaning) {
        this.css = css;
        this.glyph = glyph;
        this.label = label;
        this.meaning = meaning;
    }

    /** The name in a report or a test: "staged-not-published". */
    public String id() {
        return label.replace(", ", "-").replace(' ', '-').toLowerCase(Locale.ROOT);
    }
}

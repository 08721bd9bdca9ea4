package dev.snapshots.harness;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** A bad command line gets one clear line naming the flag and exit code 2, never a stack trace. */
class SnapshotsCommandLineTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "run --store file:///tmp/x --window 7m | --window / window length must divide a day evenly",
                "run --store file:///tmp/x --buckets 0 | bucket count must be in 1..99999, got 0",
                "run --store file:///tmp/x --publish-concurrency 0 | --publish-concurrency must be >= 1, got 0",
                "run --store file:///tmp/x --inline-threshold -1 | --inline-threshold must be >= 0, got -1",
                "run --store file:///tmp/x --inline-threshold 3000000000 | --inline-threshold must be a whole number up to 2147483647, got '3000000000'",
                "run --store file:///tmp/x --out-of-orderness soon | --out-of-orderness must be a duration like 500ms",
                "run --store ftp://host/x | must start with file:// or s3://",
                "run --store file:///tmp/x --pipeline Orders/EU | pipeline name 'Orders/EU' must be 1-63 characters",
                "run --store file:///tmp/x --source kinesis | --source kinesis needs --stream-arn",
                "run --store file:///tmp/x --source kafka | --source must be generator, kinesis or file",
                "run --store file:///tmp/x --shard-discovery 0s | --shard-discovery must be positive",
                "run --store file:///tmp/x --shard-poll-interval 100ms | --shard-poll-interval must be at least 200ms (Kinesis allows 5 GetRecords calls per second per shard)",
                "savepoint --rest http://127.0.0.1:1 | savepoint takes --rest URL and --job-version N",
                "savepoint --rest http://127.0.0.1:1 --job-version 1 --colour blue | unknown flag --colour",
                "run --store file:///tmp/x --max-drift -5m | --max-drift must be a duration like 500ms",
                "run --store file:///tmp/x --colour blue | unknown flag --colour",
                "run --store file:///tmp/x --job-version | --job-version needs a value",
                "run --window 5m | --store is required",
                "inspect | STORE_URI is required",
                "audit file:///tmp/x --colour blue | unknown flag --colour",
                "chaos --windows 8 --overlap 3 | --windows must be between 12 (",
                "chaos --shards 0 | --shards must be a whole number >= 1",
                "chaos --s3-faults lots | --s3-faults must be a fraction between 0 and 0.5, got 'lots'",
                "chaos --kills -1 | --kills must be a whole number >= 0",
                "chaos --s3-outage soon | --s3-outage must be a whole number >= 0, got 'soon'",
                "chaos --inline-threshold -5 | --inline-threshold must be a whole number >= 0, got '-5'",
                "chaos --colour blue | unknown flag --colour",
                "bench --store ftp | --store must be file or s3, got 'ftp'",
                "bench --events lots | --events must be a positive whole number, got 'lots'",
                "bench --publish-concurrency 0 | --publish-concurrency must be a positive whole number, got '0'",
                "bench --catch-up maybe | --catch-up must be yes or no, got 'maybe'",
                "upgrade --rest http://127.0.0.1:1 --jar job.jar --store file:///tmp/x | --roll is required for upgrade",
                "replay --rest http://127.0.0.1:1 --jar job.jar --store file:///tmp/x | --from-savepoint is required for replay",
                "promote file:///tmp/x | --job-version N is required",
                "protect --rest http://127.0.0.1:1 --expires-minutes 0 --agent-uri http://127.0.0.1:2 | --expires-minutes must be a positive whole number, got '0'",
                "protect --rest http://127.0.0.1:1 --expires-minutes 3000 --agent-uri http://127.0.0.1:2 | --expires-minutes must be 1..2880, got 3000",
                "protect --rest http://127.0.0.1:1 --renew-seconds 600 --agent-uri http://127.0.0.1:2 | --renew-seconds must be less than the expiry (600 s), got 600",
                "frobnicate | unknown command 'frobnicate'",
            })
    void badCommandLinesGetAClearMessageAndExitCodeTwo(String args, String message) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();

        int code = Snapshots.run(args.split(" "), print(out), print(err));

        String said = err.toString(StandardCharsets.UTF_8);
        assertThat(code).isEqualTo(2);
        for (String part : message.split(" / ")) {
            assertThat(said).contains(part);
        }
        assertThat(said).doesNotContain("\tat ").doesNotContain("Exception");
    }

    @Test
    void everyCommandHasHelp() {
        for (String command :
                new String[] {
                    "demo", "run", "inspect", "audit", "cluster", "chaos", "bench", "protect",
                    "submit"
                }) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            assertThat(
                            Snapshots.run(
                                    new String[] {command, "--help"},
                                    print(out),
                                    print(new ByteArrayOutputStream())))
                    .isZero();
            assertThat(out.toString(StandardCharsets.UTF_8))
                    .startsWith("usage: snapshots " + command);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertThat(
                        Snapshots.run(
                                new String[] {"--help"},
                                print(out),
                                print(new ByteArrayOutputStream())))
                .isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("demo", "run", "inspect");
    }

    private static PrintStream print(ByteArrayOutputStream bytes) {
        return new PrintStream(bytes, true, StandardCharsets.UTF_8);
    }
}

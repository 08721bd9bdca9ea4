package dev.snapshots.sink;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The primitive-keyed order equals the plain one: by key, ties by content. */
class KeyOrderTest {
    static LongStream seeds() {
        return LongStream.rangeClosed(1, 500);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void ordersRowsAsSortingByKeyThenContentDoes(long seed) {
        Random random = new Random(seed);
        int n = random.nextInt(random.nextBoolean() ? 8 : 3000);
        String prefix = text(random, random.nextInt(12));
        List<String> pool = new ArrayList<>();
        for (int i = 0; i < 1 + random.nextInt(Math.max(1, n)); i++) {
            pool.add(prefix + text(random, random.nextInt(9)));
        }
        String[] keys = new String[n];
        byte[][] content = new byte[n][];
        for (int i = 0; i < n; i++) {
            keys[i] = pool.get(random.nextInt(pool.size())); // repeats: ties by content
            content[i] = new byte[random.nextInt(4)];
            random.nextBytes(content[i]);
        }

        int[] order = KeyOrder.of(keys, i -> content[i]);

        Comparator<Integer> byKeyThenContent =
                Comparator.<Integer, String>comparing(i -> keys[i])
                        .thenComparing((a, b) -> Arrays.compareUnsigned(content[a], content[b]));
        List<Integer> expected = IntStream.range(0, n).boxed().sorted(byKeyThenContent).toList();
        assertThat(Arrays.stream(order).sorted().toArray())
                .as("seed %d: every row once", seed)
                .isEqualTo(IntStream.range(0, n).toArray());
        assertThat(rows(order, keys, content))
                .as("seed %d", seed)
                .isEqualTo(rows(expected.stream().mapToInt(i -> i).toArray(), keys, content));
    }

    /** Rows as (key, content) in the given order: equal rows may come in either order. */
    private static List<String> rows(int[] order, String[] keys, byte[][] content) {
        List<String> out = new ArrayList<>();
        for (int i : order) {
            out.add(keys[i] + "|" + Arrays.toString(content[i]));
        }
        return out;
    }

    /** Digits, ASCII, the NUL char, and chars above the Latin range and the surrogates. */
    private static String text(Random random, int length) {
        char[] alphabet = {
            '0', '1', '9', 'a', 'Z', '-', '\0', 'é', 'Ω', '中', '\uD83D', '\uDE00', '\uffff'
        };
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < length; i++) {
            s.append(
                    random.nextInt(3) == 0
                            ? alphabet[random.nextInt(alphabet.length)]
                            : (char) ('0' + random.nextInt(10)));
        }
        return s.toString();
    }
}

package dev.snapshots.job.sql;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.annotation.Internal;

/**
 * A pipeline as a SQL script: {@code CREATE TABLE} and {@code CREATE VIEW} statements, {@code SET
 * 'key' = 'value'} settings, and exactly one {@code INSERT INTO}, separated by semicolons. Split
 * here, not by Flink (whose {@code executeSql} takes one statement): a semicolon inside a string, a
 * quoted name or a comment does not end a statement.
 */
@Internal
public final class SqlScript {
    /** What a statement does, by its first words. */
    public enum Kind {
        SET,
        CREATE,
        INSERT
    }

    /**
     * @param line the line its first word is on, counted from 1
     */
    public record Statement(int line, Kind kind, String text) {}

    private static final Pattern FIRST_WORDS =
            Pattern.compile(
                    "(?is)(SET|INSERT\\s+INTO|CREATE\\s+(?:TEMPORARY\\s+)?(?:TABLE|VIEW))\\b.*");
    private static final Pattern SETTING =
            Pattern.compile("(?is)SET\\s+'((?:[^']|'')*)'\\s*=\\s*'((?:[^']|'')*)'\\s*");

    private static final String NAME =
            "(?:`(?:[^`]|``)+`|[\\w$]+)(?:\\s*\\.\\s*(?:`(?:[^`]|``)+`|[\\w$]+))*";
    private static final Pattern NAME_PART = Pattern.compile("`((?:[^`]|``)+)`|([\\w$]+)");
    private static final Pattern INSERT_TARGET =
            Pattern.compile("(?is)INSERT\\s+INTO\\s+(" + NAME + ")");
    private static final Pattern CREATE_TABLE =
            Pattern.compile(
                    "(?is)CREATE\\s+(?:TEMPORARY\\s+)?TABLE\\s+(?:IF\\s+NOT\\s+EXISTS\\s+)?("
                            + NAME
                            + ")");

    private static final Pattern WITH = Pattern.compile("(?i)\\bWITH\\s*\\(\\s*");
    private static final Pattern HINT_OPTIONS =
            Pattern.compile(
                    "(?is)^INSERT\\s+INTO\\s+" + NAME + "\\s*/\\*\\+\\s*OPTIONS\\s*\\(\\s*");
    private static final Pattern OPTION =
            Pattern.compile("(?s)'((?:[^']|'')*)'\\s*=\\s*'((?:[^']|'')*)'\\s*,?\\s*");

    private final List<Statement> statements;

    private SqlScript(List<Statement> statements) {
        this.statements = statements;
    }

    /**
     * @throws IllegalArgumentException naming the line of a statement that is not one of the kinds
     *     above, a second INSERT, a missing one, or an unclosed string or comment
     */
    public static SqlScript parse(String script) {
        List<Statement> statements = new ArrayList<>();
        for (Piece piece : split(script)) {
            int from = codeStart(piece.text);
            String code = piece.text.substring(from).strip();
            if (code.isEmpty()) {
                continue;
            }
            int line = piece.line + lines(piece.text.substring(0, from));
            Matcher first = FIRST_WORDS.matcher(code);
            if (!first.matches()) {
                throw new IllegalArgumentException(
                        "line "
                                + line
                                + ": a script holds CREATE TABLE, CREATE VIEW, SET and one"
                                + " INSERT INTO; found: "
                                + abbreviate(code));
            }
            String word = first.group(1).toUpperCase(Locale.ROOT);
            Kind kind =
                    word.startsWith("SET")
                            ? Kind.SET
                            : word.startsWith("INSERT") ? Kind.INSERT : Kind.CREATE;
            if (kind == Kind.SET && !SETTING.matcher(code).matches()) {
                throw new IllegalArgumentException(
                        "line "
                                + line
                                + ": write a setting as SET 'key' = 'value'; found: "
                                + code);
            }
            statements.add(new Statement(line, kind, code));
        }
        List<Statement> inserts = statements.stream().filter(s -> s.kind() == Kind.INSERT).toList();
        if (inserts.size() != 1) {
            throw new IllegalArgumentException(
                    inserts.isEmpty()
                            ? "the script has no INSERT INTO: it must write one table"
                            : "the script has "
                                    + inserts.size()
                                    + " INSERT INTO statements (lines "
                                    + inserts.stream()
                                            .map(s -> Integer.toString(s.line()))
                                            .reduce((a, b) -> a + ", " + b)
                                            .orElseThrow()
                                    + "): one job writes one table");
        }
        return new SqlScript(statements);
    }

    public List<Statement> statements() {
        return statements;
    }

    /** The SET statements' settings, in order (a later one of a key wins). */
    public Map<String, String> settings() {
        Map<String, String> settings = new LinkedHashMap<>();
        for (Statement s : statements) {
            if (s.kind() == Kind.SET) {
                Matcher m = SETTING.matcher(s.text());
                if (m.matches()) {
                    settings.put(m.group(1).replace("''", "'"), m.group(2).replace("''", "'"));
                }
            }
        }
        return settings;
    }

    /**
     * The options of the table the INSERT writes, as the script declares it ({@code CREATE TABLE
     * ... WITH (...)}), overridden by the INSERT's {@code OPTIONS} hint: what a deploy tool reads
     * of a job without planning it (its pipeline and version, so its job id, and its store).
     *
     * @throws IllegalArgumentException if the script does not declare the table it writes
     */
    public Map<String, String> sinkOptions() {
        Statement insert =
                statements.stream().filter(s -> s.kind() == Kind.INSERT).findFirst().orElseThrow();
        Matcher target = INSERT_TARGET.matcher(insert.text());
        if (!target.lookingAt()) {
            throw new IllegalArgumentException(
                    "line " + insert.line() + ": INSERT INTO names no table: " + insert.text());
        }
        String table = lastName(target.group(1));
        Map<String, String> options = new LinkedHashMap<>();
        statements.stream()
                .filter(s -> s.kind() == Kind.CREATE)
                .filter(
                        s -> {
                            Matcher m = CREATE_TABLE.matcher(s.text());
                            return m.lookingAt() && lastName(m.group(1)).equals(table);
                        })
                .reduce((first, later) -> later)
                .map(s -> options(s.text(), tableOptions(s.text())))
                .ifPresentOrElse(
                        options::putAll,
                        () -> {
                            throw new IllegalArgumentException(
                                    "the INSERT on line "
                                            + insert.line()
                                            + " writes "
                                            + table
                                            + ", which the script does not declare with CREATE"
                                            + " TABLE");
                        });
        Matcher hint = HINT_OPTIONS.matcher(insert.text());
        options.putAll(options(insert.text(), hint.lookingAt() ? hint.end() : -1));
        return options;
    }

    /** The quoted {@code 'key' = 'value'} pairs from {@code from} on; none if it is negative. */
    private static Map<String, String> options(String statement, int from) {
        Map<String, String> options = new LinkedHashMap<>();
        if (from >= 0) {
            Matcher pair = OPTION.matcher(statement);
            pair.region(from, statement.length());
            while (pair.lookingAt()) {
                options.put(unquote(pair.group(1)), unquote(pair.group(2)));
                pair.region(pair.end(), statement.length());
            }
        }
        return options;
    }

    /**
     * Where a CREATE TABLE's options begin: after its {@code WITH (} outside every parenthesis and
     * quoted text (a column's comment may say anything); -1 if it has none.
     */
    private static int tableOptions(String create) {
        int depth = 0;
        for (int i = 0; i < create.length(); i++) {
            char c = create.charAt(i);
            if (c == '\'' || c == '"' || c == '`') {
                i = closing(create, i, String.valueOf(c), 0) - 1;
            } else if (c == '(') {
                depth++;
            } else if (c == ')') {
                depth--;
            } else if (depth == 0) {
                Matcher with = WITH.matcher(create).region(i, create.length());
                if (with.lookingAt()) {
                    return with.end();
                }
            }
        }
        return -1;
    }

    private static String unquote(String quoted) {
        return quoted.replace("''", "'");
    }

    /** The last part of a maybe qualified, maybe back-quoted name: catalog.db.`table`. */
    private static String lastName(String name) {
        Matcher part = NAME_PART.matcher(name);
        String last = name;
        while (part.find()) {
            last = part.group(1) != null ? part.group(1).replace("``", "`") : part.group(2);
        }
        return last;
    }

    private record Piece(int line, String text) {}

    /** The text between semicolons that are code: not inside a string, a name or a comment. */
    private static List<Piece> split(String script) {
        List<Piece> pieces = new ArrayList<>();
        int start = 0;
        int startLine = 1;
        int line = 1;
        int i = 0;
        while (i < script.length()) {
            char c = script.charAt(i);
            if (c == '\'' || c == '"' || c == '`') {
                int end = closing(script, i, String.valueOf(c), line);
                line += lines(script.substring(i, end));
                i = end;
            } else if (script.startsWith("--", i)) {
                int end = script.indexOf('\n', i);
                i = end < 0 ? script.length() : end;
            } else if (script.startsWith("/*", i)) {
                int end = closing(script, i + 1, "*/", line);
                line += lines(script.substring(i, end));
                i = end;
            } else {
                if (c == ';') {
                    pieces.add(new Piece(startLine, script.substring(start, i)));
                    start = i + 1;
                    startLine = line;
                } else if (c == '\n') {
                    line++;
                }
                i++;
            }
        }
        pieces.add(new Piece(startLine, script.substring(start)));
        return pieces;
    }

    /**
     * Where the quoted text or comment opened at {@code from} ends (after its closing mark); a
     * quote doubled inside is part of the text.
     */
    private static int closing(String script, int from, String mark, int line) {
        int at = from + 1;
        while (true) {
            int end = script.indexOf(mark, at);
            if (end < 0) {
                throw new IllegalArgumentException(
                        "line "
                                + line
                                + ": "
                                + (mark.equals("*/") ? "a comment" : "a " + mark + "-quoted text")
                                + " is never closed");
            }
            if (mark.length() == 1 && script.startsWith(mark + mark, end)) {
                at = end + 2;
                continue;
            }
            return end + mark.length();
        }
    }

    /** Where the code starts: after the whitespace and comments that lead the text. */
    private static int codeStart(String text) {
        int at = 0;
        while (true) {
            while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
                at++;
            }
            if (text.startsWith("--", at)) {
                int end = text.indexOf('\n', at);
                at = end < 0 ? text.length() : end;
            } else if (text.startsWith("/*", at) && !text.startsWith("/*+", at)) {
                at = text.indexOf("*/", at) + 2; // closed: split checked it
            } else {
                return at;
            }
        }
    }

    private static int lines(String text) {
        return (int) text.chars().filter(c -> c == '\n').count();
    }

    private static String abbreviate(String code) {
        String flat = code.replaceAll("\\s+", " ");
        return flat.length() <= 60 ? flat : flat.substring(0, 57) + "...";
    }
}

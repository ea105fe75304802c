package io.fencelock.bench;

import java.util.List;

/**
 * The pieces of the report and how they render: report.md and index.html come from one list of
 * blocks, so that they never disagree. In the HTML every table sits in a box that scrolls sideways
 * inside the page's fixed width, so no table runs off the page however many columns it has.
 */
final class Blocks {
    private Blocks() {}

    /** A piece of the report: a heading, a paragraph, a list, a table or a chart (HTML only). */
    sealed interface Block permits Heading, Text, Bullets, Table, Chart {}

    record Heading(int level, String text) implements Block {}

    record Text(String text) implements Block {}

    record Bullets(List<String> items) implements Block {}

    /**
     * A table; a line break in a cell is a second line in HTML and " · " in Markdown. {@code style}
     * is a CSS class: "grid" tables (summary, targets) and "matrix" tables (the TCK's) colour a cell by
     * how it starts (met or pass, MISSED or fail, "fencelock leads", another library leads, not measured,
     * not rankable or not claimed); "plain" tables do not.
     */
    record Table(List<String> header, List<List<String>> rows, String style) implements Block {
        Table(List<String> header, List<List<String>> rows) {
            this(header, rows, "plain");
        }
    }

    record Chart(String svg) implements Block {}

    static String markdown(List<Block> blocks) {
        StringBuilder md = new StringBuilder();
        for (Block block : blocks) {
            if (block instanceof Heading h) {
                md.append("#".repeat(h.level())).append(' ').append(h.text()).append("\n\n");
            } else if (block instanceof Text t) {
                md.append(t.text()).append("\n\n");
            } else if (block instanceof Bullets l) {
                l.items().forEach(i -> md.append("- ").append(i).append('\n'));
                md.append('\n');
            } else if (block instanceof Table t) {
                md.append("| ").append(String.join(" | ", cells(t.header()))).append(" |\n|");
                t.header().forEach(x -> md.append("---|"));
                md.append('\n');
                t.rows()
                        .forEach(r -> md.append("| ")
                                .append(String.join(" | ", cells(r)))
                                .append(" |\n"));
                md.append('\n');
            } // a Chart is in index.html only; the tables carry the same numbers
        }
        return md.toString();
    }

    private static List<String> cells(List<String> row) {
        return row.stream().map(c -> c.replace("|", "\\|").replace("\n", " · ")).toList();
    }

    private static final String STYLE = """
            body{font-family:system-ui,sans-serif;font-size:14px;width:1180px;margin:16px auto;padding:0 12px;\
            color:#1a202c;box-sizing:border-box}
            h1{font-size:22px;margin:0 0 4px}h2{border-bottom:2px solid #2b6cb0;margin-top:2em}h3{margin:1.4em 0 .3em}
            p,li{max-width:1150px}p.meta{color:#4a5568;font-size:12px;margin:2px 0 8px}
            .scroll{overflow-x:auto;max-width:100%;margin:.4em 0 1em}
            table{border-collapse:collapse}th,td{border:1px solid #cbd5e0;padding:3px 7px;text-align:right;\
            vertical-align:top}
            th{background:#edf2f7;font-size:12px}td:first-child,th:first-child{text-align:left}
            table.grid{table-layout:fixed;width:100%;font-size:12px}table.grid td{text-align:left;line-height:1.3;overflow-wrap:anywhere}
            table.grid td:first-child{font-weight:600;background:#f7fafc}
            td.t,th.t,table.grid th{text-align:left}table.grid th:first-child{width:190px}
            td.good{background:#e6f4ea}td.bad{background:#fdecea}td.na{color:#718096;background:#f7f7f7}
            table.matrix{font-size:11px;table-layout:fixed;width:100%}table.matrix th:first-child{width:210px}
            table.matrix td,table.matrix th{overflow-wrap:break-word;text-align:left;padding:2px 4px}
            code{background:#edf2f7;padding:0 3px}svg{display:block;margin:.3em 0 1.2em;max-width:100%;height:auto}
            """;

    static String html(List<Block> blocks) {
        StringBuilder h = new StringBuilder("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                + "<title>fencelock comparison run</title>\n<style>\n" + STYLE + "</style></head><body>\n");
        boolean first = true;
        for (Block block : blocks) {
            if (block instanceof Heading x) {
                h.append("<h")
                        .append(x.level())
                        .append('>')
                        .append(Html.escape(x.text()))
                        .append("</h")
                        .append(x.level())
                        .append(">\n");
            } else if (block instanceof Text t) {
                h.append(first ? "<p class=\"meta\">" : "<p>")
                        .append(code(Html.escape(t.text())))
                        .append("</p>\n");
                first = false;
            } else if (block instanceof Bullets l) {
                h.append("<ul>");
                l.items()
                        .forEach(i ->
                                h.append("<li>").append(code(Html.escape(i))).append("</li>"));
                h.append("</ul>\n");
            } else if (block instanceof Table t) {
                table(h, t);
            } else if (block instanceof Chart c) {
                h.append(c.svg()).append('\n');
            }
        }
        return h.append("</body></html>\n").toString();
    }

    private static void table(StringBuilder h, Table t) {
        h.append("<div class=\"scroll\"><table class=\"").append(t.style()).append("\"><tr>");
        boolean grid = !t.style().equals("plain");
        for (int i = 0; i < t.header().size(); i++) {
            // a header sits over its column's figures on the right, over words on the left
            boolean overWords = i == 0 || !numericColumn(t, i);
            h.append(overWords && !grid ? "<th class=\"t\">" : "<th>")
                    .append(lines(t.header().get(i)))
                    .append("</th>");
        }
        h.append("</tr>");
        for (List<String> r : t.rows()) {
            h.append("<tr>");
            for (int i = 0; i < r.size(); i++) {
                String c = r.get(i);
                String tone = grid ? (i > 0 ? tone(c) : "") : numeric(c) ? "" : "t";
                h.append(tone.isEmpty() ? "<td>" : "<td class=\"" + tone + "\">")
                        .append(lines(c))
                        .append("</td>");
            }
            h.append("</tr>");
        }
        h.append("</table></div>\n");
    }

    /** How a verdict or a ranking reads at a glance. */
    static String tone(String cell) {
        if (cell.startsWith("met") || cell.startsWith("pass") || cell.startsWith(Cells.FENCELOCK + " leads")) {
            return "good";
        }
        if (cell.startsWith("MISSED") || cell.startsWith("fail") || cell.contains(" leads")) {
            return "bad";
        }
        return cell.startsWith("not ") || cell.startsWith("not-") || cell.startsWith("no ") ? "na" : "";
    }

    /** Whether the column's first filled cell is a figure. */
    private static boolean numericColumn(Table t, int column) {
        return t.rows().stream()
                .filter(r -> column < r.size() && !r.get(column).isEmpty())
                .findFirst()
                .map(r -> numeric(r.get(column)))
                .orElse(false);
    }

    /** Figures are right-aligned to line up their digits; words read better from the left. */
    private static boolean numeric(String cell) {
        return cell.isEmpty() || cell.equals("–") || cell.matches("[-+–]?[0-9].*");
    }

    private static String lines(String cell) {
        return code(Html.escape(cell)).replace("\n", "<br>");
    }

    /** `x` → <code>x</code>, after escaping. */
    private static String code(String escaped) {
        return escaped.replaceAll("`([^`]+)`", "<code>$1</code>");
    }
}

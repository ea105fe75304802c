package io.fencelock.bench;

import java.util.List;
import java.util.Locale;

/**
 * Plain inline SVG charts (no scripts, nothing fetched): one chart per workload and backend, in
 * panels side by side (e.g. 1, 8 and 64 clients), each panel on its own scale, so that a slow
 * contender or another backend never squashes the bars of the others. Each bar has its value written
 * out and, where the cell had several passes, a whisker from their lowest to their highest.
 */
final class Svg {
    private static final int WIDTH = 1150;
    private static final int LABEL_WIDTH = 250;
    private static final int VALUE_ROOM = 92;
    private static final int ROW = 20;
    private static final int TOP = 40;

    /** One contender's row: its label, its role (colour) and one value per panel (null: not measured). */
    record Row(String label, String role, List<Cells.Value> values) {}

    private Svg() {}

    static String panels(String title, String unit, boolean lowerIsBetter, List<String> panels, List<Row> rows) {
        int panelWidth = (WIDTH - LABEL_WIDTH) / panels.size();
        int barRoom = panelWidth - VALUE_ROOM;
        int height = TOP + rows.size() * ROW + 6;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
                        + " font-family=\"system-ui,sans-serif\" role=\"img\" aria-label=\"%s\">",
                WIDTH,
                height,
                WIDTH,
                height,
                Html.escape(title)));
        text(svg, 0, 14, "start", "font-weight=\"bold\" font-size=\"13\"", title);
        text(
                svg,
                WIDTH,
                14,
                "end",
                "font-size=\"11\" fill=\"#4a5568\"",
                unit + (lowerIsBetter ? ", lower is better" : ", higher is better")
                        + "; each panel on its own scale; whisker: min–max of the passes; * spread over "
                        + Math.round(Figures.UNSTEADY_SPREAD * 100) + "%");
        for (int p = 0; p < panels.size(); p++) {
            int x0 = LABEL_WIDTH + p * panelWidth;
            text(svg, x0, TOP - 6, "start", "font-size=\"11\" font-weight=\"bold\" fill=\"#2d3748\"", panels.get(p));
            svg.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#cbd5e0\"/>",
                    x0,
                    TOP - 2,
                    x0,
                    height - 4));
            double max = 0;
            for (Row r : rows) {
                Cells.Value v = r.values().get(p);
                if (v != null && !Double.isNaN(v.median())) {
                    max = Math.max(max, v.hasSpread() ? Math.max(v.max(), v.median()) : v.median());
                }
            }
            for (int i = 0; i < rows.size(); i++) {
                bar(
                        svg,
                        x0,
                        TOP + i * ROW,
                        barRoom,
                        max,
                        rows.get(i).values().get(p),
                        rows.get(i).role());
            }
        }
        for (int i = 0; i < rows.size(); i++) {
            Row r = rows.get(i);
            String weight = r.role().equals("fencelock") ? " font-weight=\"bold\"" : "";
            text(svg, LABEL_WIDTH - 8, TOP + i * ROW + 13, "end", "font-size=\"12\"" + weight, r.label());
        }
        return svg.append("</svg>").toString();
    }

    private static void bar(StringBuilder svg, int x0, int y, int room, double max, Cells.Value v, String role) {
        if (v == null || Double.isNaN(v.median())) {
            text(svg, x0 + 4, y + 13, "start", "font-size=\"11\" fill=\"#a0aec0\"", "not measured");
            return;
        }
        double scale = max > 0 ? room / max : 0;
        int w = (int) Math.max(1, Math.round(v.median() * scale));
        svg.append(String.format(
                Locale.ROOT,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"14\" fill=\"%s\"%s/>",
                x0 + 1,
                y + 2,
                w,
                colour(role),
                v.noisy() ? " fill-opacity=\"0.45\"" : ""));
        int end = x0 + 1 + w;
        if (v.hasSpread()) {
            int lo = x0 + 1 + (int) Math.round(v.min() * scale);
            int hi = x0 + 1 + (int) Math.round(v.max() * scale);
            svg.append(String.format(
                    Locale.ROOT,
                    "<path d=\"M%d %dV%dM%d %dH%dM%d %dV%d\" stroke=\"#1a202c\" stroke-width=\"1.2\" fill=\"none\"/>",
                    lo,
                    y + 5,
                    y + 13,
                    lo,
                    y + 9,
                    hi,
                    hi,
                    y + 5,
                    y + 13));
            end = Math.max(end, hi);
        }
        text(svg, end + 4, y + 13, "start", "font-size=\"11\"", Cells.number(v.median()) + (v.noisy() ? " *" : ""));
    }

    private static void text(StringBuilder svg, int x, int y, String anchor, String attributes, String content) {
        svg.append(String.format(
                        Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"%s\" %s>", x, y, anchor, attributes))
                .append(Html.escape(content))
                .append("</text>");
    }

    private static String colour(String role) {
        return switch (role) {
            case "fencelock" -> "#2b6cb0";
            case "provider" -> "#90cdf4";
            case "raw" -> "#a0aec0";
            default -> "#dd6b20";
        };
    }
}

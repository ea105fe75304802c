package io.fencelock.bench;

import java.util.List;
import java.util.Locale;

/** Plain inline SVG charts (no scripts, nothing fetched): horizontal bars with their values written out. */
final class Svg {
    private static final int LABEL_WIDTH = 330;
    private static final int BAR_WIDTH = 420;
    private static final int ROW = 22;

    /** One bar; {@code kind} picks its colour (fencelock, raw, peer). */
    record Bar(String label, double value, String kind) {}

    private Svg() {}

    static String bars(String title, String unit, List<Bar> bars) {
        double max = bars.stream()
                .mapToDouble(Bar::value)
                .filter(v -> !Double.isNaN(v))
                .max()
                .orElse(1);
        int height = 30 + bars.size() * ROW;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
                        + " role=\"img\" aria-label=\"%s\">",
                LABEL_WIDTH + BAR_WIDTH + 110,
                height,
                Html.escape(title)));
        svg.append("<text x=\"0\" y=\"16\" font-weight=\"bold\" font-size=\"13\">")
                .append(Html.escape(title))
                .append(" (")
                .append(Html.escape(unit))
                .append(")</text>");
        for (int i = 0; i < bars.size(); i++) {
            Bar b = bars.get(i);
            int y = 28 + i * ROW;
            double v = Double.isNaN(b.value()) ? 0 : b.value();
            int w = (int) Math.max(1, Math.round(BAR_WIDTH * v / (max <= 0 ? 1 : max)));
            svg.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"end\">%s</text>",
                    LABEL_WIDTH - 6,
                    y + 13,
                    Html.escape(b.label())));
            svg.append(String.format(
                    Locale.ROOT,
                    "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"16\" fill=\"%s\"/>",
                    LABEL_WIDTH,
                    y,
                    w,
                    colour(b.kind())));
            svg.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%d\" y=\"%d\" font-size=\"12\">%s</text>",
                    LABEL_WIDTH + w + 4,
                    y + 13,
                    Html.escape(ReportWriter.number(b.value()))));
        }
        return svg.append("</svg>").toString();
    }

    private static String colour(String kind) {
        return switch (kind) {
            case "fencelock" -> "#2b6cb0";
            case "raw" -> "#a0aec0";
            default -> "#dd6b20";
        };
    }
}

package io.fencelock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.awt.image.BufferedImage;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.imageio.ImageIO;

/** Renders a page in headless Chromium to a PNG: the report as a reviewer's browser shows it. */
final class HeadlessChromium {
    static final int WIDTH = 1280;
    static final int HEIGHT = 4000;
    /** Set only by hand, never by CI (scripts/test-all.sh installs chromium): skips the rendering check. */
    static final String SKIP_PROPERTY = "fencelock.bench.png.skip";

    private HeadlessChromium() {}

    /** /usr/bin/chromium, else {@code chromium} on the PATH. */
    static Optional<Path> find() {
        Path debian = Path.of("/usr/bin/chromium");
        if (Files.isExecutable(debian)) {
            return Optional.of(debian);
        }
        return Stream.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
                .filter(dir -> !dir.isBlank())
                .map(dir -> Path.of(dir, "chromium"))
                .filter(Files::isExecutable)
                .findFirst();
    }

    /** Screenshots {@code page} at {@link #WIDTH} x {@link #HEIGHT} into {@code png}, with a fresh profile. */
    static void screenshot(Path chromium, Path page, Path png, Path work) throws Exception {
        Path profile = Files.createTempDirectory(work, "chromium-profile");
        Path log = work.resolve("chromium.log");
        Process p = new ProcessBuilder(List.of(
                        chromium.toString(),
                        "--headless=new",
                        "--no-sandbox",
                        "--disable-gpu",
                        "--disable-quic",
                        "--no-first-run",
                        "--disable-background-networking",
                        "--disable-component-update",
                        "--disable-sync",
                        "--user-data-dir=" + profile,
                        "--window-size=" + WIDTH + "," + HEIGHT,
                        "--screenshot=" + png,
                        page.toUri().toString()))
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(
                    "headless Chromium did not finish within 120 s; its output: " + Files.readString(log));
        }
        assertThat(p.exitValue())
                .as("chromium's exit code; its output: %s", Files.readString(log))
                .isZero();
    }

    /** The PNG is a real picture of a page: {@link #WIDTH} wide and far from one colour. */
    static void assertRendered(Path png) throws Exception {
        assertThat(png).isRegularFile();
        BufferedImage image = ImageIO.read(png.toFile());
        assertThat(image).as("%s read as an image", png).isNotNull();
        assertThat(image.getWidth()).isEqualTo(WIDTH);
        assertThat(image.getHeight()).isGreaterThan(1000);
        Set<Integer> colours = new HashSet<>();
        for (int y = 0; y < image.getHeight(); y += 7) {
            for (int x = 0; x < image.getWidth(); x += 5) {
                colours.add(image.getRGB(x, y));
            }
        }
        assertThat(colours.size()).as("distinct colours in the screenshot").isGreaterThan(20);
    }
}

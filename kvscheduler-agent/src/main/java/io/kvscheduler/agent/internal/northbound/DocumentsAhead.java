package io.kvscheduler.agent.internal.northbound;

import io.kvscheduler.agent.internal.format.ConfigDocument;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The config files of the file northbound's directory, read and parsed on a thread of their own
 * while the agent starts its plugins and its REST server, so that the northbound's first reading
 * finds them parsed: at 100,000 values the parse takes longer than the rest of the start (W9 of
 * {@code BENCHMARKS.md}), and both used to run one after the other.
 *
 * <p>This is only a cache. A file is taken from it when the northbound reads exactly the same
 * content, under the same reading rules ({@link ConfigDirectory}); anything else is parsed again.
 * What this reading meets (a file it cannot read, a syntax error) is never reported from here: the
 * northbound's own reading reports it, with the same words as without the cache. Each document is
 * taken once; {@link #close} drops what was not taken.
 */
public final class DocumentsAhead implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DocumentsAhead.class);

  /** A file's content and what parsing it gave: the document, or the syntax error. */
  record Parsed(String content, ConfigDocument document, ConfigDocument.SyntaxException error) {}

  private final Path dir;
  private final CompletableFuture<Map<Path, Parsed>> parsed = new CompletableFuture<>();
  private volatile boolean closed;

  /** How many documents were taken (for tests). */
  private final AtomicInteger taken = new AtomicInteger();

  private DocumentsAhead(Path dir) {
    this.dir = dir;
  }

  /**
   * Starts reading and parsing the config files of {@code dir} on a daemon thread.
   *
   * @param followExternalLinks as the file northbound will read them ({@link
   *     FileNorthbound#followExternalLinks})
   */
  public static DocumentsAhead start(Path dir, boolean followExternalLinks) {
    DocumentsAhead ahead = new DocumentsAhead(dir.toAbsolutePath().normalize());
    Thread t = new Thread(() -> ahead.readAndParse(followExternalLinks), "kvs-file-parse-ahead");
    t.setDaemon(true);
    t.start();
    return ahead;
  }

  /** The directory whose files these are (absolute, normalized). */
  Path directory() {
    return dir;
  }

  private void readAndParse(boolean followExternalLinks) {
    Map<Path, Parsed> out = new HashMap<>();
    try {
      ConfigDirectory directory = new ConfigDirectory(dir);
      directory.followExternalLinks(followExternalLinks);
      Map<Path, String> contents =
          directory.readAll(
              new ConfigDirectory.Problems() {
                @Override
                public boolean stopping() {
                  return closed;
                }

                @Override
                public void unreadable(Path file, String message, String reason) {
                  // the northbound's own reading reports it
                }

                @Override
                public String previous(Path file) {
                  return null;
                }
              });
      for (Map.Entry<Path, String> f : contents.entrySet()) {
        if (closed) {
          break;
        }
        String content = f.getValue();
        try {
          out.put(
              f.getKey(),
              new Parsed(
                  content,
                  f.getKey().getFileName().toString().endsWith(".json")
                      ? ConfigDocument.parseJson(content)
                      : ConfigDocument.parseYaml(content),
                  null));
        } catch (ConfigDocument.SyntaxException e) {
          out.put(f.getKey(), new Parsed(content, null, e));
        }
      }
    } catch (Exception | OutOfMemoryError e) {
      // the northbound reads the directory again, and reports what is wrong with it
      LOG.debug("file northbound: reading {} ahead failed", dir, e);
    } finally {
      if (closed) {
        out.clear();
      }
      parsed.complete(out);
    }
  }

  /**
   * What parsing {@code file} gave, when it was parsed ahead from exactly {@code content}; null
   * otherwise (then the caller parses it). Waits for the reading ahead to end. Each file is taken
   * once.
   */
  Parsed take(Path file, String content) {
    if (closed) {
      return null;
    }
    Map<Path, Parsed> all;
    try {
      all = parsed.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    } catch (ExecutionException e) {
      return null;
    }
    synchronized (all) {
      Parsed p = all.remove(file);
      if (p == null || !p.content().equals(content)) {
        return null;
      }
      taken.incrementAndGet();
      return p;
    }
  }

  /** Waits until the reading ahead has ended (for tests). */
  void awaitRead() throws InterruptedException, ExecutionException {
    parsed.get();
  }

  /** How many documents the northbound took from here (for tests). */
  int taken() {
    return taken.get();
  }

  /** Drops what was not taken; a reading under way stops at its next file. */
  @Override
  public void close() {
    closed = true;
    parsed.thenAccept(
        all -> {
          synchronized (all) {
            if (!all.isEmpty()) {
              all.clear();
            }
          }
        });
  }
}

package io.kvscheduler.ctl.internal;

import io.kvscheduler.api.Excerpt;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A plain-text table: a header and rows, columns padded to their widest cell. Cells hold user data
 * (keys, errors): their control characters are escaped ({@link Excerpt#escaped}).
 */
public final class Table {
  private final List<String> header;
  private final List<List<String>> rows = new ArrayList<>();

  public Table(String... header) {
    this.header = List.of(header);
  }

  public Table row(String... cells) {
    List<String> r = new ArrayList<>(Arrays.asList(cells));
    for (int i = 0; i < r.size(); i++) {
      r.set(i, r.get(i) == null ? "" : Excerpt.escaped(r.get(i)));
    }
    while (r.size() < header.size()) {
      r.add("");
    }
    rows.add(r);
    return this;
  }

  public int size() {
    return rows.size();
  }

  /** Prints the table (nothing but the header when empty). */
  public void print(PrintWriter out) {
    int[] width = new int[header.size()];
    for (int i = 0; i < width.length; i++) {
      width[i] = header.get(i).length();
      for (List<String> r : rows) {
        width[i] = Math.max(width[i], r.get(i).length());
      }
    }
    line(out, header, width);
    rows.forEach(r -> line(out, r, width));
    out.flush();
  }

  private static void line(PrintWriter out, List<String> cells, int[] width) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < width.length; i++) {
      String c = cells.get(i);
      b.append(c);
      if (i < width.length - 1) {
        b.append(" ".repeat(width[i] - c.length() + 2));
      }
    }
    out.println(b.toString().stripTrailing());
  }
}
